#!/usr/bin/env python3
"""Writes the eval-compare cases: tests/eval_compare/<case>/{base.json,candidate.json,args,exit}.

Run it after changing a case, then regenerate the expected outputs with
`UPDATE_GOLDEN=1 cargo test --test eval_compare` and review the diff. `exit` is the intent
of the case and is written here, never by the golden update.
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def trial(i, success=True, calls=(), tokens=(100, 20), errors=0):
    return {
        "index": i,
        "success": success,
        "expectations": [],
        "toolCalls": [{"name": c, "arguments": {}, "isError": False} for c in calls],
        "toolErrors": errors,
        "inputTokens": tokens[0],
        "outputTokens": tokens[1],
        "turns": len(calls) + 1,
        "latencyMs": 10,
    }


def task(id, trials, no_tool=False, tools=()):
    return {"id": id, "tags": [], "noToolCall": no_tool, "expectedTools": list(tools), "trials": trials}


def base_run():
    return {
        "format": "mcpspec-eval-results/1",
        "partial": False,
        "set": {"name": "weather", "kind": "regression", "file": "evals/weather.yaml", "trials": 3},
        "model": {"profile": "local", "api": "openai", "model": "policy-1", "baseUrl": "http://127.0.0.1:9000/v1"},
        "server": {
            "name": "mcpspec-example-server", "version": "1.0.0", "era": "modern", "revision": "2026-07-28",
            "toolsHash": "a" * 64, "toolCount": 6,
        },
        "started": "2026-12-01T12:00:00Z",
        "durationMs": 1000,
        "tasks": [
            task("get-weather", [trial(i, calls=["get_weather"]) for i in range(3)], tools=["get_weather"]),
            task("forecast", [trial(i, calls=["get_weather", "get_forecast"]) for i in range(3)],
                 tools=["get_weather", "get_forecast"]),
            task("greet-no-tool", [trial(i) for i in range(3)], no_tool=True),
            task("hard", [trial(i, success=False, calls=["echo"]) for i in range(3)], tools=["search"]),
        ],
    }


def find(run, id):
    return next(t for t in run["tasks"] if t["id"] == id)


def case(name, cand, exit_code, args="", base=None, raw_candidate=None):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "base.json"), "w") as f:
        json.dump(base or base_run(), f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "candidate.json"), "w") as f:
        if raw_candidate is not None:
            f.write(raw_candidate)
        else:
            json.dump(cand, f, indent=2)
            f.write("\n")
    with open(os.path.join(d, "args"), "w") as f:
        f.write(args + "\n")
    with open(os.path.join(d, "exit"), "w") as f:
        f.write(f"{exit_code}\n")


def main():
    # An unchanged server compares clean.
    case("unchanged", base_run(), 0)

    c = base_run()
    find(c, "hard")["trials"] = [trial(i, calls=["search"]) for i in range(3)]
    case("improved", c, 0)

    c = base_run()
    t = find(c, "get-weather")
    t["trials"] = [trial(0, calls=["get_weather"]), trial(1, success=False, calls=["get_forecast"]),
                   trial(2, success=False, calls=["get_forecast"])]
    case("regressed", c, 1)
    # The same, as JSON on stdout (the table goes to stderr).
    case("regressed-json", c, 1, args="--json -")

    # One of three trials of a no-tool task calls a tool: at a pass rate of 0.6 the task still
    # "passes" (2/3), so only the noToolCall rule catches it.
    c = base_run()
    find(c, "greet-no-tool")["trials"][1] = trial(1, success=False, calls=["get_weather"])
    case("no-tool-now-calls", c, 1, args="--pass-rate 0.6")

    # Same success, twice the calls.
    c = base_run()
    find(c, "forecast")["trials"] = [
        trial(i, calls=["get_weather", "get_forecast", "get_weather", "get_forecast"]) for i in range(3)]
    case("calls-doubled", c, 1)
    # Within a raised limit, the same candidate passes.
    case("calls-doubled-within-limit", c, 0, args="--max-calls-increase 150%")

    c = base_run()
    for t in c["tasks"]:
        for tr in t["trials"]:
            tr["inputTokens"] = 140
    case("tokens-up", c, 1)

    c = base_run()
    find(c, "forecast")["trials"][0]["toolErrors"] = 1
    case("tool-errors-up", c, 1)

    # A task dropped, one added: listed, not a regression.
    c = base_run()
    c["tasks"] = [t for t in c["tasks"] if t["id"] != "hard"]
    c["tasks"].append(task("new-task", [trial(i, calls=["get_weather"]) for i in range(3)]))
    case("missing-tasks", c, 0)

    # Another model *and* another tool list: the change could come from either, refused.
    c = base_run()
    c["model"]["model"] = "policy-2"
    c["server"]["revision"] = "2025-11-25"
    c["server"]["era"] = "legacy"
    c["server"]["toolsHash"] = "b" * 64
    case("different-model", c, 2)

    # Two models on one server (same tools): a `models` pairing; the model is the point, not
    # a warning; the era still is.
    c = base_run()
    c["model"]["profile"] = "other"
    c["model"]["model"] = "policy-2"
    c["model"]["temperature"] = 0.7
    c["server"]["era"] = "legacy"
    find(c, "get-weather")["trials"][2]["success"] = False
    case("two-models-one-server", c, 1)

    # One model, two servers with different tools: a `servers` pairing (the usual one).
    c = base_run()
    c["server"]["version"] = "1.1.0"
    c["server"]["toolsHash"] = "b" * 64
    case("two-servers-one-model", c, 0)

    c = base_run()
    c["partial"] = True
    find(c, "forecast")["trials"] = find(c, "forecast")["trials"][:1]
    c["tasks"] = [t for t in c["tasks"] if t["id"] != "hard"]
    # A partial candidate never clears the gate: exit 5, the tasks never judged named.
    case("partial", c, 5)
    # Unless told to compare what ran.
    case("partial-allowed", c, 0, args="--allow-partial")

    # Ctrl-C before some tasks ran: `eval run` keeps them with `trials: []`. They were
    # never judged: exit 5, named.
    c = base_run()
    c["partial"] = True
    find(c, "get-weather")["trials"] = []
    find(c, "greet-no-tool")["trials"] = []
    case("interrupted-unrun-tasks", c, 5)

    # A candidate stopped by --max-cost before its regressed task ran: the regression is
    # hidden in what never ran, so the comparison cannot say OK (it did: exit 0).
    c = base_run()
    c["partial"] = True
    c["aborted"] = "stopped before spending more than --max-cost $0.025: $0.0240 spent so far"
    find(c, "forecast")["trials"] = []
    find(c, "hard")["trials"] = []
    case("capped-hides-regression", c, 5)

    # Judged answers that still pass but score much lower: the drop past --max-judge-drop
    # (0.1) is a regression of its own (it passed before: only pass/fail flips counted).
    def judged(run, id, scores):
        for t, sc in zip(find(run, id)["trials"], scores):
            t["expectations"] = [{
                "name": "answer judged: mentions the temperature", "passed": sc >= 0.5,
                "score": sc, "threshold": 0.5,
                "judge": {"profile": "judge", "score": sc, "reason": "r"},
            }]
    b = base_run()
    judged(b, "get-weather", [0.9, 0.9, 1.0])
    judged(b, "forecast", [0.8, 0.8, 0.8])
    c = copy.deepcopy(b)
    judged(c, "get-weather", [0.6, 0.6, 0.7])
    judged(c, "forecast", [0.8, 0.75, 0.8])
    case("judge-score-dropped", c, 1, base=b)
    case("judge-score-drop-tolerated", c, 0, base=b, args="--max-judge-drop 0.5")

    # A capability set is tracked, not gated on: the regression is reported, exit 0.
    b = base_run()
    b["set"]["kind"] = "capability"
    c = copy.deepcopy(b)
    find(c, "get-weather")["trials"][1]["success"] = False
    case("capability-not-gated", c, 0, base=b)

    text = json.dumps(base_run(), indent=2).replace('"durationMs": 1000,', '"durationMs": 1000', 1)
    case("malformed", None, 2, raw_candidate=text + "\n")

    c = base_run()
    c["format"] = "mcpspec-eval-results/2"
    case("wrong-format", c, 2)

    # The right format, the wrong shape: a required key missing, at its position.
    c = base_run()
    del c["server"]["toolsHash"]
    case("missing-field", c, 2)

    c = base_run()
    c["tasks"].append(copy.deepcopy(c["tasks"][0]))
    case("duplicate-task", c, 2)

    c = base_run()
    for t in c["tasks"]:
        t["id"] = "other-" + t["id"]
    case("no-common-task", c, 2)

    # Eight of ten tasks regressed: McNemar's exact p = 2 / 2^8 = 0.0078.
    b = base_run()
    b["tasks"] = [task(f"t{i:02}", [trial(j, calls=["get_weather"]) for j in range(3)]) for i in range(10)]
    c = copy.deepcopy(b)
    for t in c["tasks"][:8]:
        for tr in t["trials"]:
            tr["success"] = False
    case("significant", c, 1, base=b)

    case("bad-threshold", base_run(), 2, args="--max-calls-increase lots")


main()
