#!/usr/bin/env bash
# Runs the newcomer's app and drives it with the real JS clients (from the repository root):
#   bash newcomer/run.sh            the pretend models (FunctionModel), "local" for extract_many
#   FAKE=1 bash newcomer/run.sh     the weather agent on the fake OpenAI server (tests/fakes)
set -u
PORT=${PORT:-8765}
[ -d tests/js/node_modules ] || make js-deps
pids=()
if [ "${FAKE:-}" = 1 ]; then
  .venv/bin/python -m tests.fakes.serve openai --port 8101 \
    --text '{"city": "Paris", "celsius": 18, "fahrenheit": 64.4, "summary": "Light rain"}' &
  pids+=($!); export MODEL=fake:http://127.0.0.1:8101/v1
fi
.venv/bin/python -m uvicorn newcomer.app:app --port "$PORT" & pids+=($!)
trap 'kill "${pids[@]}"' EXIT
until curl -s -o /dev/null "http://127.0.0.1:$PORT/docs"; do sleep 0.5; done
U=http://127.0.0.1:$PORT
node newcomer/client.mjs agui "$U/agui"
node newcomer/client.mjs aisdk "$U/chat"
node newcomer/client.mjs agui-approve "$U/travel/agui" yes
node newcomer/client.mjs aisdk-approve "$U/travel/chat" no
job=$(curl -s -XPOST "$U/extract" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"])')
while :; do
  state=$(curl -s "$U/extract/$job"); echo "$state" | cut -c1-160
  echo "$state" | grep -q '"status":"running"' || break; sleep 3
done
