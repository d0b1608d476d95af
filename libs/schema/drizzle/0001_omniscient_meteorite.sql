CREATE TABLE "billing_days" (
	"user_id" integer NOT NULL,
	"day" date NOT NULL,
	"plan" text NOT NULL,
	"installs" integer NOT NULL,
	"apps" integer NOT NULL,
	"amount_due_cents" bigint NOT NULL,
	"charged_cents" bigint NOT NULL,
	"balance_after_cents" bigint NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "billing_days_user_id_day_pk" PRIMARY KEY("user_id","day")
);
--> statement-breakpoint
CREATE TABLE "billing_mail" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"kind" text NOT NULL,
	"to_address" text NOT NULL,
	"subject" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "billing_subscriptions" (
	"user_id" integer PRIMARY KEY NOT NULL,
	"pending_plan" text,
	"period_start" timestamp with time zone,
	"period_end" timestamp with time zone,
	"low_balance_since" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "billing_transactions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"type" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"balance_after_cents" bigint NOT NULL,
	"day" date NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"idem_key" text,
	"top_up_id" integer,
	"refund_of" bigint,
	"created_by" integer,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plan_changes" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"from_plan" text NOT NULL,
	"to_plan" text NOT NULL,
	"effective_at" timestamp with time zone NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "top_ups" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"amount_cents" bigint NOT NULL,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"processor" text NOT NULL,
	"invoice_id" text NOT NULL,
	"payment_method" text NOT NULL,
	"address" text NOT NULL,
	"crypto_amount" text NOT NULL,
	"rate" text,
	"checkout_url" text,
	"expires_at" timestamp with time zone NOT NULL,
	"credited_at" timestamp with time zone,
	"transaction_id" bigint,
	"review_reason" text,
	"paid_amount" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "billing_days" ADD CONSTRAINT "billing_days_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "billing_mail" ADD CONSTRAINT "billing_mail_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "billing_subscriptions" ADD CONSTRAINT "billing_subscriptions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "billing_transactions" ADD CONSTRAINT "billing_transactions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_changes" ADD CONSTRAINT "plan_changes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_ups" ADD CONSTRAINT "top_ups_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "billing_mail_pending_idx" ON "billing_mail" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE UNIQUE INDEX "billing_tx_idem_uq" ON "billing_transactions" USING btree ("idem_key");--> statement-breakpoint
CREATE INDEX "billing_tx_user_day_idx" ON "billing_transactions" USING btree ("user_id","day");--> statement-breakpoint
CREATE INDEX "billing_tx_refund_of_idx" ON "billing_transactions" USING btree ("refund_of");--> statement-breakpoint
CREATE INDEX "plan_changes_user_idx" ON "plan_changes" USING btree ("user_id","effective_at");--> statement-breakpoint
CREATE UNIQUE INDEX "top_ups_invoice_uq" ON "top_ups" USING btree ("processor","invoice_id");--> statement-breakpoint
CREATE INDEX "top_ups_user_idx" ON "top_ups" USING btree ("user_id");