// An AI SDK tool approval in a browser page (bundled by esbuild in the test):
// the first stream asks for approval; the page approves, as useChat's
// addToolApprovalResponse does, and reads the resumed stream.
import { DefaultChatTransport, readUIMessageStream } from "ai";

const transport = new DefaultChatTransport({ api: "/chat" });

async function read(messages, message) {
  const stream = await transport.sendMessages({
    chatId: "chat-browser", messages, trigger: "submit-message", messageId: undefined,
    abortSignal: undefined,
  });
  let last = message;
  for await (const snapshot of readUIMessageStream({ stream, message })) {
    last = structuredClone(snapshot);
    document.getElementById("out").textContent = JSON.stringify(last.parts.at(-1) ?? null);
  }
  return last;
}

let error = null;
let first = null;
let second = null;
try {
  const user = { id: "u1", role: "user", parts: [{ type: "text", text: "Mail Ada" }] };
  first = await read([user], undefined);
  const answered = {
    ...first,
    parts: first.parts.map((p) => p.state === "approval-requested"
      ? { ...p, state: "approval-responded", approval: { id: p.approval.id, approved: true } }
      : p),
  };
  second = await read([user, answered], answered);
} catch (exc) {
  error = String(exc);
}
window.agentflowResult = { first, second, error };
