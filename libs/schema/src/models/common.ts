import { Type, type TSchema } from "@sinclair/typebox";

export const ErrorBody = Type.Object({ error: Type.String() }, { $id: "Error", description: "Every failure: one readable message." });

/** Path ids are positive integers; a bad one is a 404 (handled by the route), not a 400. */
export const IdParam = Type.String({ pattern: "^[0-9]{1,10}$" });

export const Timestamp = Type.String({ format: "date-time", description: "ISO 8601, UTC" });

export const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);

export const Url = Type.String({ maxLength: 2048, description: "http(s) URL" });

export const Platform = Type.Union([Type.Literal("android"), Type.Literal("ios"), Type.Literal("web")], { error: "platform must be one of android, ios, web" });
