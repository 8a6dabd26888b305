// One step that needs both a person's approval (send_email) and a
// client-side tool (pick_color), through the AI SDK's own chat (the `ai`
// package's AbstractChat, which useChat wraps): onToolCall answers pick_color
// with addToolOutput while the stream runs; after it finishes the person
// approves with addToolApprovalResponse, and sendAutomaticallyWhen
// (lastAssistantMessageIsCompleteWithApprovalResponses) sends both answers back.
// Usage: node aisdk_approval_client_tool.mjs URL
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { Chat } from "./memory_chat.mjs";


const [url] = process.argv.slice(2);
const calls = [];
const finishes = [];
let error = null;
let secondDone;
const second = new Promise((resolve) => { secondDone = resolve; });
const chat = new Chat({
  id: "chat-approval-client-tool",
  transport: new DefaultChatTransport({ api: url }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  onToolCall: ({ toolCall }) => {
    calls.push({ toolName: toolCall.toolName, toolCallId: toolCall.toolCallId, input: toolCall.input });
    if (toolCall.toolName === "pick_color") {
      chat.addToolOutput({ tool: "pick_color", toolCallId: toolCall.toolCallId, output: { color: "teal" } });
    }
  },
  onFinish: ({ finishReason }) => {
    finishes.push({ finishReason });
    if (finishes.length === 2) secondDone();
  },
  onError: (e) => { error = String(e); secondDone(); },
});
let asked = null;
try {
  await chat.sendMessage({ text: "Mail Ada the banner color" });
  asked = structuredClone(chat.messages.at(-1).parts.filter((p) => p.type.startsWith("tool-")));
  const approval = asked.find((p) => p.state === "approval-requested");
  await chat.addToolApprovalResponse({ id: approval.approval.id, approved: true });
  if (chat.status === "submitted" || chat.status === "streaming") await second;
} catch (exc) {
  error = String(exc);
}
console.log(JSON.stringify({ calls, finishes, error, asked, status: chat.status, messages: chat.messages }));
