export * from "./meta.ts";
export * from "./status.ts";
