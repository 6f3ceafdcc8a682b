import type { z } from "zod";
import type { Db } from "../db/client";
import { DomainError, ValidationFailed } from "../errors";
import { renderPrompt } from "../prompts/renderPrompt";
import type { ReasoningThinkRequest } from "./schemas";

type Asked = z.output<typeof ReasoningThinkRequest>;
type Request = Asked & { messages: NonNullable<Asked["messages"]> };

/**
 * A think request's messages with its `prompt` rendered in: the rendered text is the system
 * message, first, or the only (user) message when the request has none. Returns the prompt
 * version the call is attributed to (its `prompt_key` and `prompt_version`) and the model its
 * profile recommends (set by a person or an applied learning proposal), which the router prefers. Input errors name
 * JSON Pointers under `/prompt/inputs`; an unknown prompt or version is a 400 naming `/prompt/key`
 * or `/prompt/version`.
 */
export async function withPromptMessages(
  db: Db,
  orgDid: string,
  asked: Asked,
): Promise<{ request: Request; prompt: { key: string; version: string; recommendedModel: string | null } | null }> {
  const request = { ...asked, messages: asked.messages ?? [] };
  if (!request.prompt) {
    if (asked.messages === undefined)
      throw ValidationFailed([{ field: "messages", code: "REQUIRED_FIELD_MISSING", message: "messages is required." }]);
    if (request.messages.length === 0)
      throw ValidationFailed([
        {
          field: "messages",
          code: "OUT_OF_RANGE",
          message: "messages needs at least one message, unless a prompt is given.",
        },
      ]);
    return { request, prompt: null };
  }
  const { key, version } = request.prompt;
  const rendered = await renderPrompt(db, orgDid, key, request.prompt, "/prompt/inputs").catch((e: unknown) => {
    // A prompt or version the organization does not have is a mistake in the request, like an unknown pinned_model.
    if (!(e instanceof DomainError) || e.status !== 404) throw e;
    const unknownVersion = version !== undefined && e.message.includes("version");
    throw ValidationFailed([
      {
        field: unknownVersion ? "/prompt/version" : "/prompt/key",
        code: unknownVersion ? "UNKNOWN_VERSION" : "UNKNOWN_PROMPT",
        message: `${e.message} See GET /v1/prompts.`,
      },
    ]);
  });
  const messages: Request["messages"] =
    request.messages.length === 0
      ? [{ role: "user", content: rendered.text }]
      : [{ role: "system", content: rendered.text }, ...request.messages];
  return {
    request: { ...request, messages },
    prompt: { key: rendered.prompt_key, version: rendered.version, recommendedModel: rendered.recommendedModel },
  };
}
