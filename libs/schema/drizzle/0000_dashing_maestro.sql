CREATE TABLE "api_keys" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"key_hint" text NOT NULL,
	"scope" text NOT NULL,
	"app_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" serial PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"is_admin" boolean DEFAULT false NOT NULL,
	"plan" text DEFAULT 'free' NOT NULL,
	"subscription_status" text DEFAULT 'active' NOT NULL,
	"balance_cents" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "apps" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"name" text NOT NULL,
	"platform" text NOT NULL,
	"postback_token" text NOT NULL,
	"app_link" text,
	"archived" boolean DEFAULT false NOT NULL,
	"vapid_public_key" text NOT NULL,
	"vapid_private_key_enc" text NOT NULL,
	"fcm_credentials_enc" text,
	"fcm_project_id" text,
	"fcm_client_email" text,
	"apns_key_enc" text,
	"apns_key_id" text,
	"apns_team_id" text,
	"apns_bundle_id" text,
	"apns_production" boolean,
	"credentials_version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app_push_packs" (
	"app_id" integer NOT NULL,
	"pack_id" integer NOT NULL,
	"attached_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "app_push_packs_app_id_pack_id_pk" PRIMARY KEY("app_id","pack_id")
);
--> statement-breakpoint
CREATE TABLE "pack_event_pushes" (
	"id" serial PRIMARY KEY NOT NULL,
	"language_id" integer NOT NULL,
	"event_code" text NOT NULL,
	"delay_minutes" integer DEFAULT 0 NOT NULL,
	"title" text NOT NULL,
	"body" text,
	"icon_url" text,
	"click_url" text,
	"image_url" text,
	"audience_tag" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pack_languages" (
	"id" serial PRIMARY KEY NOT NULL,
	"pack_id" integer NOT NULL,
	"language_code" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pack_scheduled_pushes" (
	"id" serial PRIMARY KEY NOT NULL,
	"language_id" integer NOT NULL,
	"day_of_week" smallint NOT NULL,
	"send_time" time NOT NULL,
	"title" text NOT NULL,
	"body" text,
	"icon_url" text,
	"click_url" text,
	"image_url" text,
	"audience_tag" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "push_packs" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer,
	"name" text NOT NULL,
	"fallback_language" text NOT NULL,
	"is_system" boolean NOT NULL,
	"is_published" boolean NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "devices" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"app_id" integer NOT NULL,
	"install_token" text NOT NULL,
	"external_id" text,
	"platform" text,
	"country" text,
	"language" text,
	"model" text,
	"tz_sec" integer,
	"tags" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"transport_type" text,
	"transport_token" text,
	"token_invalid" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_active_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "apps" ADD CONSTRAINT "apps_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app_push_packs" ADD CONSTRAINT "app_push_packs_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app_push_packs" ADD CONSTRAINT "app_push_packs_pack_id_push_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."push_packs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pack_event_pushes" ADD CONSTRAINT "pack_event_pushes_language_id_pack_languages_id_fk" FOREIGN KEY ("language_id") REFERENCES "public"."pack_languages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pack_languages" ADD CONSTRAINT "pack_languages_pack_id_push_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."push_packs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pack_scheduled_pushes" ADD CONSTRAINT "pack_scheduled_pushes_language_id_pack_languages_id_fk" FOREIGN KEY ("language_id") REFERENCES "public"."pack_languages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "push_packs" ADD CONSTRAINT "push_packs_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_app_id_apps_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."apps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_uq" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_user_idx" ON "api_keys" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_lower_uq" ON "users" USING btree (lower("email"));--> statement-breakpoint
CREATE INDEX "apps_user_idx" ON "apps" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "app_push_packs_pack_idx" ON "app_push_packs" USING btree ("pack_id");--> statement-breakpoint
CREATE INDEX "pack_event_code_idx" ON "pack_event_pushes" USING btree ("event_code");--> statement-breakpoint
CREATE INDEX "pack_event_lang_idx" ON "pack_event_pushes" USING btree ("language_id");--> statement-breakpoint
CREATE UNIQUE INDEX "pack_languages_pack_code_uq" ON "pack_languages" USING btree ("pack_id","language_code");--> statement-breakpoint
CREATE INDEX "pack_scheduled_slot_idx" ON "pack_scheduled_pushes" USING btree ("day_of_week","send_time");--> statement-breakpoint
CREATE INDEX "pack_scheduled_lang_idx" ON "pack_scheduled_pushes" USING btree ("language_id");--> statement-breakpoint
CREATE INDEX "push_packs_user_idx" ON "push_packs" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "devices_app_install_uq" ON "devices" USING btree ("app_id","install_token");--> statement-breakpoint
CREATE INDEX "devices_app_external_idx" ON "devices" USING btree ("app_id","external_id");