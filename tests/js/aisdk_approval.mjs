// An approval through the AI SDK's UI message stream, with the real `ai`
// package: the first stream ends asking to approve a tool call; the client
// answers as useChat's addToolApprovalResponse does (the tool part in state
// "approval-responded") and the second stream continues the same message.
// With "last", the transport posts only the newest message, as a chat whose
// server keeps the conversation in a store may (prepareSendMessagesRequest).
// Usage: node aisdk_approval.mjs URL APPROVED(true|false) [last]
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [url, approved, only] = process.argv.slice(2);
const transport = new DefaultChatTransport({ api: url, ...(only === "last" ? {
  prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, messages: messages.slice(-1) } }),
} : {}) });

async function read(messages, message) {
  const stream = await transport.sendMessages({
    chatId: "chat-approval", messages, trigger: "submit-message", messageId: undefined,
    abortSignal: undefined,
  });
  let last = message;
  let error = null;
  for await (const snapshot of readUIMessageStream({ stream, message, onError: (e) => { error = String(e); } })) {
    last = structuredClone(snapshot);
  }
  return { last, error };
}

const user = { id: "u1", role: "user", parts: [{ type: "text", text: "Mail Ada" }] };
const first = await read([user], undefined);
const asked = first.last.parts.find((p) => p.type === "tool-send_email");
const answered = {
  ...first.last,
  parts: first.last.parts.map((p) => p === asked
    ? { ...p, state: "approval-responded", approval: { id: p.approval.id, approved: approved === "true", reason: "not now" } }
    : p),
};
const second = await read([user, answered], answered);
console.log(JSON.stringify({ first, asked, second }));
