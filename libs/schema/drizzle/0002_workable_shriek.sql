CREATE TABLE "device_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"item_id" text NOT NULL,
	"device_id" bigint NOT NULL,
	"app_id" integer NOT NULL,
	"code" text NOT NULL,
	"source" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"device_id" bigint NOT NULL,
	"app_id" integer NOT NULL,
	"msg_id" text NOT NULL,
	"event" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trigger_queue" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"app_id" integer NOT NULL,
	"device_id" bigint NOT NULL,
	"event_id" bigint NOT NULL,
	"event_code" text NOT NULL,
	"pack_id" integer,
	"language_id" integer,
	"event_push_id" integer,
	"due_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "activity_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"app_id" integer NOT NULL,
	"kind" text NOT NULL,
	"item_id" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"ip" text,
	"method" text,
	"external_id" text,
	"event" text,
	"params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"outcome" text DEFAULT 'recorded' NOT NULL,
	"message" text,
	"devices" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "events" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "deposits" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "source" text DEFAULT 'sdk' NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "info_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "device_events" ADD CONSTRAINT "device_events_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_events" ADD CONSTRAINT "device_events_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_events" ADD CONSTRAINT "notification_events_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_events" ADD CONSTRAINT "notification_events_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD CONSTRAINT "trigger_queue_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD CONSTRAINT "trigger_queue_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD CONSTRAINT "trigger_queue_event_id_device_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."device_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD CONSTRAINT "trigger_queue_pack_id_push_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."push_packs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD CONSTRAINT "trigger_queue_language_id_pack_languages_id_fk" FOREIGN KEY ("language_id") REFERENCES "public"."pack_languages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD CONSTRAINT "trigger_queue_event_push_id_pack_event_pushes_id_fk" FOREIGN KEY ("event_push_id") REFERENCES "public"."pack_event_pushes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activity_log" ADD CONSTRAINT "activity_log_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "device_events_item_device_uq" ON "device_events" USING btree ("item_id","device_id");--> statement-breakpoint
CREATE INDEX "device_events_device_idx" ON "device_events" USING btree ("device_id","id");--> statement-breakpoint
CREATE INDEX "device_events_app_idx" ON "device_events" USING btree ("app_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "device_events_deposit_uq" ON "device_events" USING btree ("device_id","code") WHERE "device_events"."code" ~ '^dep[0-9]*$';--> statement-breakpoint
CREATE UNIQUE INDEX "notification_events_uq" ON "notification_events" USING btree ("device_id","msg_id","event");--> statement-breakpoint
CREATE INDEX "notification_events_msg_idx" ON "notification_events" USING btree ("msg_id");--> statement-breakpoint
CREATE UNIQUE INDEX "trigger_queue_push_uq" ON "trigger_queue" USING btree ("event_id","event_push_id");--> statement-breakpoint
CREATE UNIQUE INDEX "trigger_queue_conversion_uq" ON "trigger_queue" USING btree ("event_id") WHERE "trigger_queue"."kind" = 'conversion';--> statement-breakpoint
CREATE INDEX "trigger_queue_due_idx" ON "trigger_queue" USING btree ("status","due_at");--> statement-breakpoint
CREATE UNIQUE INDEX "activity_log_item_uq" ON "activity_log" USING btree ("item_id");--> statement-breakpoint
CREATE INDEX "activity_log_app_idx" ON "activity_log" USING btree ("app_id","id");--> statement-breakpoint
CREATE INDEX "devices_app_id_idx" ON "devices" USING btree ("app_id","id");--> statement-breakpoint
CREATE INDEX "devices_app_country_idx" ON "devices" USING btree ("app_id","country","id");--> statement-breakpoint
CREATE INDEX "devices_app_language_idx" ON "devices" USING btree ("app_id","language","id");--> statement-breakpoint
CREATE INDEX "devices_app_platform_idx" ON "devices" USING btree ("app_id","platform","id");--> statement-breakpoint
CREATE INDEX "devices_tags_gin" ON "devices" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "devices_events_gin" ON "devices" USING gin ("events");