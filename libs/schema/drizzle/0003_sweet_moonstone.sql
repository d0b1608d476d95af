CREATE TABLE "push_rotations" (
	"source" text NOT NULL,
	"source_id" integer NOT NULL,
	"counter" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "push_rotations_source_source_id_pk" PRIMARY KEY("source","source_id")
);
--> statement-breakpoint
CREATE TABLE "send_job_results" (
	"job_id" text PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "send_stats_daily" (
	"app_id" integer NOT NULL,
	"day" date NOT NULL,
	"source" text NOT NULL,
	"source_id" integer NOT NULL,
	"pack_id" integer DEFAULT 0 NOT NULL,
	"sent" bigint DEFAULT 0 NOT NULL,
	"failed" bigint DEFAULT 0 NOT NULL,
	"delivered" bigint DEFAULT 0 NOT NULL,
	"clicked" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "send_stats_daily_app_id_day_source_source_id_pk" PRIMARY KEY("app_id","day","source","source_id")
);
--> statement-breakpoint
CREATE TABLE "sending_marks" (
	"name" text PRIMARY KEY NOT NULL,
	"value" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sends" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"send_key" text NOT NULL,
	"app_id" integer NOT NULL,
	"source" text NOT NULL,
	"source_id" integer NOT NULL,
	"pack_id" integer,
	"audience" text NOT NULL,
	"day" date NOT NULL,
	"render_at" timestamp with time zone NOT NULL,
	"rotation" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone,
	"status" text DEFAULT 'fanning' NOT NULL,
	"cursor" bigint DEFAULT 0 NOT NULL,
	"jobs" integer DEFAULT 0 NOT NULL,
	"recipients" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "send_stats_daily" ADD CONSTRAINT "send_stats_daily_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sends" ADD CONSTRAINT "sends_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "send_stats_pack_idx" ON "send_stats_daily" USING btree ("pack_id","day");--> statement-breakpoint
CREATE UNIQUE INDEX "sends_key_uq" ON "sends" USING btree ("send_key");--> statement-breakpoint
CREATE INDEX "sends_status_idx" ON "sends" USING btree ("status");--> statement-breakpoint
CREATE INDEX "sends_app_day_idx" ON "sends" USING btree ("app_id","day");