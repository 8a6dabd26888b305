// The frontend side, in Node with the real clients (what a React app's hooks use):
//   node client.mjs agui  <url>                       AG-UI HttpAgent, structured output in state
//   node client.mjs aisdk <url>                       AI SDK chat (AbstractChat + DefaultChatTransport)
//   node client.mjs agui-approve  <url> yes|no        AG-UI run, interrupt, resume
//   node client.mjs aisdk-approve <url> yes|no        AI SDK chat, addToolApprovalResponse
// Run from the repository root with NODE_PATH=tests/js/node_modules.
import { createRequire } from "node:module";
const require = createRequire(process.cwd() + "/tests/js/");
const { HttpAgent, buildResumeArray } = require("@ag-ui/client");
const { AbstractChat, DefaultChatTransport,
        lastAssistantMessageIsCompleteWithApprovalResponses } = require("ai");

const [mode, url, answer] = process.argv.slice(2);

class NodeChat extends AbstractChat {            // what @ai-sdk/react's Chat is, minus React
  constructor(init) {
    const state = {
      status: "ready", error: undefined, messages: [],
      pushMessage(m) { this.messages = [...this.messages, m]; },
      popMessage() { this.messages = this.messages.slice(0, -1); },
      replaceMessage(i, m) { this.messages = this.messages.map((x, j) => (j === i ? m : x)); },
      snapshot: (v) => structuredClone(v),
    };
    super({ ...init, state });
  }
}

async function agui(prompt, approve) {
  const agent = new HttpAgent({ url, threadId: "thread-" + mode });
  agent.messages = [{ id: "u1", role: "user", content: prompt }];
  let interrupts = [];
  const seen = [];
  const sub = {
    onEvent: ({ event }) => { seen.push(event.type); },
    onRunFinishedEvent: (p) => { if (p.outcome === "interrupt") interrupts = p.interrupts; },
    onRunErrorEvent: ({ event }) => { console.log("RUN_ERROR", event.message); },
  };
  await agent.runAgent({}, sub);
  const out = { events: seen, state: agent.state, interrupts };
  if (approve !== undefined && interrupts.length) {
    const resume = buildResumeArray(interrupts, Object.fromEntries(interrupts.map((i) => [i.id,
      approve ? { status: "resolved", payload: { approved: true } }
              : { status: "resolved", payload: { approved: false, reason: "too expensive" } }])));
    const again = [];
    await agent.runAgent({ resume }, { onEvent: ({ event }) => { again.push(event.type); } });
    out.resumed = again;
  }
  out.messages = agent.messages.map((m) => ({ role: m.role, content: m.content,
                                               toolCalls: m.toolCalls?.map((c) => c.function.name) }));
  return out;
}

async function aisdk(prompt, approve) {
  let finished;
  const done = new Promise((r) => { finished = r; });
  const chat = new NodeChat({
    transport: new DefaultChatTransport({ api: url, ...(process.env.LAST_ONLY ? {
      // with a store the server keeps the history: send only the new message
      prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, messages: messages.slice(-1) } }),
    } : {}) }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onError: (e) => console.log("chat error:", e.message),
  });
  await chat.sendMessage({ text: prompt });
  const asked = chat.messages.at(-1).parts.filter((p) => p.state === "approval-requested");
  if (approve !== undefined) {
    for (const p of asked) {
      await chat.addToolApprovalResponse({ id: p.approval.id, approved: approve,
                                            reason: approve ? undefined : "too expensive" });
    }
    // sendAutomaticallyWhen posts the decision; wait until the chat is idle again
    while (chat.status !== "ready" && chat.status !== "error") await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 50));
    while (chat.status !== "ready" && chat.status !== "error") await new Promise((r) => setTimeout(r, 20));
  }
  finished();
  await done;
  return { status: chat.status, error: chat.error?.message, asked: asked.length,
           messages: chat.messages.map((m) => ({ role: m.role, parts: m.parts.map((p) => {
             const { type, state, text, output, data, input, errorText } = p;
             return { type, state, text, output, data, input, errorText };
           }) })) };
}

const prompt = mode.includes("approve") ? "Book me a trip to Rome" : "Weather in Paris?";
const approve = answer === undefined ? undefined : answer === "yes";
const result = mode.startsWith("agui") ? await agui(prompt, approve) : await aisdk(prompt, approve);
console.log(JSON.stringify(result, null, 1));
