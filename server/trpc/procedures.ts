import { z } from "zod";
import type { Database, Db } from "../db/client";
import type { CallScope } from "../governance/governCall";
import type { Operation } from "../http/operation";
import type { Principal } from "../governance/principal";
import { governedProcedure, type LateAnswer } from "./init";

/**
 * tRPC procedures built from declarations, never restated: an area's `Operation` (its /v1 route)
 * becomes a procedure with the same capability, resource type, input (path, query and body
 * fields merged into one object), output schema and handler; what the console needs and the API
 * does not offer is a `ConsoleProcedure`, declared the same way without a path.
 */

type ShapeOf<T> = T extends z.ZodObject<infer S> ? S : Record<never, never>;
type MergedInput<P, Q, B> = z.ZodObject<ShapeOf<P> & ShapeOf<Q> & ShapeOf<B>>;

const shapeOf = (schema: z.ZodType | undefined, opId: string): z.ZodRawShape => {
  if (schema === undefined) return {};
  if (!(schema instanceof z.ZodObject))
    throw new Error(`${opId}: a tRPC procedure needs object schemas for its params, query and body.`);
  return schema.shape;
};

/** The operation's params, query and body as one input object (strict when the body is). */
function mergedInput<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
  op: Operation<P, Q, B, R>,
): MergedInput<P, Q, B> {
  // A body alone is the input as it is, refinements and transforms included (nothing to merge).
  if (bodyOnly(op as unknown as Operation)) return op.body as unknown as MergedInput<P, Q, B>;
  const parts = [shapeOf(op.params, op.id), shapeOf(op.query, op.id), shapeOf(op.body, op.id)];
  const shape: Record<string, z.core.$ZodType> = {};
  for (const part of parts) {
    for (const [key, field] of Object.entries(part)) {
      if (key in shape) throw new Error(`${op.id}: the field ${key} appears twice in its params, query and body.`);
      shape[key] = field;
    }
  }
  const strict = op.body instanceof z.ZodObject && op.body.def.catchall instanceof z.ZodNever;
  return (strict ? z.object(shape).strict() : z.object(shape)) as unknown as MergedInput<P, Q, B>;
}

const bodyOnly = (op: Operation) => op.body !== undefined && op.params === undefined && op.query === undefined;

const pick = (input: Record<string, unknown>, schema: z.ZodType | undefined) =>
  schema instanceof z.ZodObject
    ? Object.fromEntries(
        Object.keys(schema.shape)
          .filter((k) => k in input)
          .map((k) => [k, input[k]]),
      )
    : {};

/** Runs the operation's own handler with the gate's scope, as its /v1 route does. */
async function runOperation(op: Operation, scope: CallScope, input: Record<string, unknown>, late?: LateAnswer) {
  const params = pick(input, op.params);
  // As on /v1: the resource is the path's first parameter unless the handler names another.
  const first = Object.values(params)[0];
  if (typeof first === "string") scope.setResource(first);
  // tRPC always answers 200; the operation's own status (201, 202) is /v1's.
  // Work after commit may complete the answer (deploy with `wait`): the caller gets it as /v1's does.
  let completedLater = false;
  const afterCommit = (fn: () => Promise<void>) => ((completedLater = true), scope.afterCommit(fn));
  const out = await op.handler({
    ...scope,
    afterCommit,
    setStatus: () => undefined,
    params,
    query: pick(input, op.query),
    body: bodyOnly(op) ? input : pick(input, op.body),
  });
  if (completedLater && late) late.answer = () => op.response.parse(out);
  return out;
}

const metaOf = (op: Pick<Operation, "capability" | "resourceType">) => ({
  capability: op.capability,
  resourceType: op.resourceType,
});

function assertJson(op: Operation, method: "read" | "write") {
  if (op.responseType) throw new Error(`${op.id} answers ${op.responseType}, not JSON: it has no tRPC procedure.`);
  if ((op.method === "GET") !== (method === "read"))
    throw new Error(`${op.id} is ${op.method}: build it with ${op.method === "GET" ? "queryFrom" : "mutationFrom"}.`);
}

/** A read operation (GET) as a tRPC query. */
export function queryFrom<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
  op: Operation<P, Q, B, R>,
) {
  assertJson(op as unknown as Operation, "read");
  return governedProcedure
    .meta(metaOf(op))
    .input(mergedInput(op))
    .output(op.response)
    .query(
      ({ ctx, input }) =>
        runOperation(op as unknown as Operation, ctx.scope, input as Record<string, unknown>) as Promise<never>,
    );
}

/** A write operation (POST, PATCH, DELETE) as a tRPC mutation. */
export function mutationFrom<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
  op: Operation<P, Q, B, R>,
) {
  assertJson(op as unknown as Operation, "write");
  return governedProcedure
    .meta(metaOf(op))
    .input(mergedInput(op))
    .output(op.response)
    .mutation(
      ({ ctx, input }) =>
        runOperation(
          op as unknown as Operation,
          ctx.scope,
          input as Record<string, unknown>,
          ctx.late,
        ) as Promise<never>,
    );
}

/** What a console procedure's handler gets: its input, the signed-in person, a database handle. */
export interface ConsoleHandlerContext<I> {
  db: Db;
  database: Database;
  principal: Principal;
  input: I;
  secret: Buffer;
  setResource(id: string | null, type?: string): void;
}

/**
 * A procedure only the console has (no /v1 route): declared like an operation, without a path.
 * It takes a signed-in person's session in one of `roles`; bearer tokens are refused, because
 * these do what the API deliberately does not offer a token.
 */
export interface ConsoleProcedure<I extends z.ZodType, R extends z.ZodType> {
  summary: string;
  roles: readonly string[];
  capability: string | null;
  resourceType: string | null;
  input?: I;
  response: R;
  handler(ctx: ConsoleHandlerContext<z.output<I>>): Promise<z.input<R>>;
}

export function defineConsoleProcedure<I extends z.ZodType = z.ZodUndefined, R extends z.ZodType = z.ZodType>(
  decl: ConsoleProcedure<I, R>,
): ConsoleProcedure<I, R> {
  return decl;
}

const consoleBase = <I extends z.ZodType, R extends z.ZodType>(decl: ConsoleProcedure<I, R>) =>
  governedProcedure
    .meta({ capability: decl.capability, resourceType: decl.resourceType, roles: decl.roles })
    .input((decl.input ?? z.undefined()) as I)
    .output(decl.response);

/** A console procedure that reads, as a tRPC query. */
export function consoleQuery<I extends z.ZodType, R extends z.ZodType>(decl: ConsoleProcedure<I, R>) {
  return consoleBase(decl).query(
    ({ ctx, input }) => decl.handler({ ...ctx.scope, input: input as z.output<I> }) as Promise<never>,
  );
}

/** A console procedure that writes, as a tRPC mutation. */
export function consoleMutation<I extends z.ZodType, R extends z.ZodType>(decl: ConsoleProcedure<I, R>) {
  return consoleBase(decl).mutation(
    ({ ctx, input }) => decl.handler({ ...ctx.scope, input: input as z.output<I> }) as Promise<never>,
  );
}
