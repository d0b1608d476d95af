CREATE TABLE "app_event_definitions" (
	"app_id" integer NOT NULL,
	"code" text NOT NULL,
	"name" text,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "app_event_definitions_app_id_code_pk" PRIMARY KEY("app_id","code")
);
--> statement-breakpoint
CREATE TABLE "app_event_stats" (
	"app_id" integer NOT NULL,
	"code" text NOT NULL,
	"count" bigint DEFAULT 0 NOT NULL,
	"devices" bigint DEFAULT 0 NOT NULL,
	"first_at" timestamp with time zone NOT NULL,
	"last_at" timestamp with time zone NOT NULL,
	CONSTRAINT "app_event_stats_app_id_code_pk" PRIMARY KEY("app_id","code")
);
--> statement-breakpoint
CREATE TABLE "push_templates" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"app_id" integer NOT NULL,
	"name" text NOT NULL,
	"default_language" text NOT NULL,
	"translations" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "schedulers" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"app_id" integer NOT NULL,
	"push_id" integer NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"send_at" timestamp with time zone,
	"days_of_week" smallint[],
	"send_time" time,
	"event_code" text,
	"delay_minutes" integer DEFAULT 0 NOT NULL,
	"filters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"last_sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "trigger_queue_conversion_uq";--> statement-breakpoint
ALTER TABLE "notification_events" ADD COLUMN "counted" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD COLUMN "scheduler_id" integer;--> statement-breakpoint
ALTER TABLE "send_stats_daily" ADD COLUMN "template_id" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "send_stats_daily" DROP CONSTRAINT "send_stats_daily_app_id_day_source_source_id_pk";--> statement-breakpoint
ALTER TABLE "send_stats_daily" ADD CONSTRAINT "send_stats_daily_app_id_day_source_source_id_template_id_pk" PRIMARY KEY("app_id","day","source","source_id","template_id");--> statement-breakpoint
ALTER TABLE "sends" ADD COLUMN "template_id" integer;--> statement-breakpoint
ALTER TABLE "app_event_definitions" ADD CONSTRAINT "app_event_definitions_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app_event_stats" ADD CONSTRAINT "app_event_stats_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "push_templates" ADD CONSTRAINT "push_templates_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "push_templates" ADD CONSTRAINT "push_templates_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedulers" ADD CONSTRAINT "schedulers_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedulers" ADD CONSTRAINT "schedulers_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedulers" ADD CONSTRAINT "schedulers_push_id_push_templates_id_fk" FOREIGN KEY ("push_id") REFERENCES "public"."push_templates"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "push_templates_app_idx" ON "push_templates" USING btree ("app_id","id");--> statement-breakpoint
CREATE INDEX "push_templates_user_idx" ON "push_templates" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "schedulers_app_idx" ON "schedulers" USING btree ("app_id","id");--> statement-breakpoint
CREATE INDEX "schedulers_kind_status_idx" ON "schedulers" USING btree ("kind","status");--> statement-breakpoint
CREATE INDEX "schedulers_event_idx" ON "schedulers" USING btree ("app_id","event_code");--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD CONSTRAINT "trigger_queue_scheduler_id_schedulers_id_fk" FOREIGN KEY ("scheduler_id") REFERENCES "public"."schedulers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "notification_events_uncounted_idx" ON "notification_events" USING btree ("id") WHERE not "notification_events"."counted";--> statement-breakpoint
CREATE UNIQUE INDEX "trigger_queue_scheduler_uq" ON "trigger_queue" USING btree ("event_id","scheduler_id") WHERE "trigger_queue"."kind" = 'scheduler';--> statement-breakpoint
-- reports the id watermark already folded into analytics stay counted
UPDATE "notification_events" SET "counted" = true WHERE "id" <= coalesce((SELECT "value" FROM "sending_marks" WHERE "name" = 'rollup'), 0);--> statement-breakpoint
-- the Events group's counters start from the events already recorded
INSERT INTO "app_event_stats" ("app_id", "code", "count", "devices", "first_at", "last_at")
  SELECT "app_id", "code", count(*), count(DISTINCT "device_id"), min("at"), max("at") FROM "device_events" GROUP BY "app_id", "code";
--> statement-breakpoint
-- the rollup now marks reports counted (ids commit out of order); its id watermark is no longer read
DELETE FROM "sending_marks" WHERE "name" = 'rollup';--> statement-breakpoint
-- `conversion` rows were a hand-off to event Schedulers, which now get `scheduler` rows written directly
DELETE FROM "trigger_queue" WHERE "kind" = 'conversion';
