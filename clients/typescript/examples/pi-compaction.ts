/**
 * A Pi coding-agent extension that hands compaction to hippo, and gives the agent hippo's memory tools.
 *
 *   HIPPO_URL=http://127.0.0.1:8000 HIPPO_KEY=hippo_... HIPPO_AGENT_ID=pi pi -e ./examples/pi-compaction.ts
 *
 * (or copy it to ~/.pi/agent/extensions/, with hippo-memory-client installed where Pi can import it).
 *
 * When Pi compacts a session (on its own near the context limit, or on /compact), the messages it
 * would summarise go to hippo's compaction instead of a summarising model: each message is
 * classified (decision, user intent, context, tool result, ...), decays by its type, and is kept,
 * compressed to a line or reduced to a pointer. What fades is stored in hippo as memories of this
 * session, and each line of the summary carries its `[id:...]`, so the `recall_memories` tool
 * registered below brings any of it back. No model call, no token spent on the summary.
 *
 * If hippo cannot be reached, the handler returns nothing and Pi's own compaction runs.
 */

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { HippoClient, createHippoTools, fromPiMessages } from "hippo-memory-client";

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export default function hippoCompaction(pi: ExtensionAPI): void {
  const connection = {
    url: process.env.HIPPO_URL ?? "http://127.0.0.1:8000",
    key: process.env.HIPPO_KEY,
    agentId: process.env.HIPPO_AGENT_ID ?? "pi",
  };
  const hippo = new HippoClient(connection);
  let toolsRegistered = false;

  pi.on("session_start", async (_event, ctx) => {
    if (toolsRegistered) return;
    try {
      for (const tool of await createHippoTools(connection)) pi.registerTool(tool);
      toolsRegistered = true;
    } catch (error) {
      ctx.ui.notify(`hippo: no memory tools (${reason(error)})`, "warning");
    }
  });

  pi.on("session_before_compact", async (event, ctx) => {
    const { preparation, signal } = event;
    const messages = fromPiMessages([...preparation.messagesToSummarize, ...preparation.turnPrefixMessages]);
    try {
      const done = await hippo.compact(messages, {
        sessionId: ctx.sessionManager.getSessionId(),
        previousSummary: preparation.previousSummary,
        signal,
      });
      const { entries, tokens_before, tokens_after } = done.stats;
      ctx.ui.notify(`hippo compacted ${entries} messages: ${tokens_before} -> ${tokens_after} tokens`, "info");
      return {
        compaction: {
          summary: done.summary,
          firstKeptEntryId: preparation.firstKeptEntryId,
          tokensBefore: preparation.tokensBefore,
          details: { hippo: done.stats },
        },
      };
    } catch (error) {
      if (!signal.aborted) ctx.ui.notify(`hippo could not compact (${reason(error)}); Pi's own compaction runs`, "warning");
      return undefined;
    }
  });
}
