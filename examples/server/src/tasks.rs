//! The 2025-11-25 tasks utility for `slow_job` (`--interactive`, stdio). rmcp 3.11 knows
//! only the 2026-07-28 extension (SEP-2663: `resultType: "task"`, `tasks/update`), so the
//! legacy utility is served here, on the stdio wire, before rmcp sees the line: a
//! task-augmented `tools/call slow_job` gets a `CreateTaskResult`, and `tasks/get`,
//! `tasks/result`, `tasks/cancel` and `tasks/list` are answered from a small store. The
//! `initialize` result gains the server's `tasks` capability. A plain (not task) call of
//! `slow_job` is rmcp's, answered at once by [`plain_result`].
//!
//! `slow_job {polls: N}` completes on the N-th `tasks/get` (default 2); `{forever: true}`
//! never does (an argument the schema does not list, so a
//! check's example call never sends it). `task-status-regresses`: the poll after a `completed` one says `working`.
//!
//! `approve_job {action}` as a task asks the client from inside the task (the spec's
//! "Input Required Status"): on its first `tasks/get` it is `input_required`; the client's
//! `tasks/result` then gets an `elicitation/create` (with the task's
//! `io.modelcontextprotocol/related-task` in `_meta`) before its reply, which waits for
//! the task's end: the client's answer completes it (`accept: {…}`, `decline`…), a refusal
//! or an answer not tied to the task (no `related-task` in its `_meta`) fails it (`isError`). A client that did not declare `elicitation` in `initialize` is not
//! asked: the task fails on that poll. Called plainly it is an interactive tool like
//! `ask_confirmation` (`crate::interactive`).

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};

pub const TOOL: &str = "slow_job";
/// The task that asks an elicitation mid-way (also a plain interactive tool).
pub const APPROVE_TOOL: &str = "approve_job";
/// `_meta` key tying a message to its task (`RelatedTaskMetadata`).
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The id of the `elicitation/create` a task sends: this prefix and the task's id.
const ASK_ID_PREFIX: &str = "ask-";
/// The `pollInterval` the server suggests, in milliseconds.
const POLL_INTERVAL_MS: u64 = 20;
const CREATED_AT: &str = "2026-01-01T00:00:00Z";

/// `slow_job`'s listing: read-only, callable as a task (`execution` is added to the listed
/// JSON by the wire, as rmcp's `Tool` has no such field).
pub fn tool() -> Tool {
    serde_json::from_value(json!({
        "name": TOOL,
        "description": "A job that takes a few polls when called as a task (2025-11-25 tasks; stdio).",
        "inputSchema": {"type": "object", "properties": {
            "polls": {"type": "integer", "minimum": 0, "maximum": 10},
        }},
        "annotations": {"readOnlyHint": true},
    }))
    .expect("a valid tool")
}

/// `execution` of `slow_job`'s listing (`approve_job`'s is added by [`TaskWire::outbound`]).
pub fn execution() -> (&'static str, Value) {
    (TOOL, json!({"taskSupport": "optional"}))
}

/// `slow_job` called plainly: done at once; a `polls` outside its schema is the tool's
/// error.
pub fn plain_result(arguments: Option<&serde_json::Map<String, Value>>) -> CallToolResult {
    let polls = arguments.and_then(|a| a.get("polls"));
    if polls.is_some_and(|p| p.as_u64().is_none_or(|n| n > 10)) {
        let text = "`polls` must be an integer from 0 to 10";
        return CallToolResult::error(vec![ContentBlock::text(text)]);
    }
    CallToolResult::success(vec![ContentBlock::text("slow_job done")])
}

struct Job {
    status: &'static str,
    /// `tasks/get` polls left before it completes; `None`: never.
    polls_left: Option<u64>,
    polls: u64,
    /// `task-status-regresses`: it has reported completed once and goes back.
    regress_pending: bool,
    ttl: Value,
    /// `approve_job`: what it asks the client, once its polls are done.
    asks: Option<Asking>,
    /// The final `CallToolResult`, when it is not `slow_job`'s.
    result: Option<Value>,
}

struct Asking {
    action: String,
    /// The `elicitation/create` was sent (its id is [`ASK_ID_PREFIX`] and the task's).
    sent: bool,
    /// The ids of the `tasks/result` requests waiting for the task's end.
    waiting: Vec<Value>,
}

impl Job {
    fn task(&self, id: &str) -> Value {
        json!({
            "taskId": id,
            "status": self.status,
            "createdAt": CREATED_AT,
            "lastUpdatedAt": CREATED_AT,
            "ttl": self.ttl,
            "pollInterval": POLL_INTERVAL_MS,
        })
    }

    /// The polls are done: `slow_job` completes; `approve_job` needs the client's input, or
    /// fails when the client cannot give it.
    fn polls_done(&mut self, client_elicits: bool) {
        if self.asks.is_none() {
            self.status = "completed";
        } else if client_elicits {
            self.status = "input_required";
        } else {
            let text = format!("{APPROVE_TOOL} needs the client's elicitation capability");
            self.finish(json!({"content": [{"type": "text", "text": text}], "isError": true}));
        }
    }

    /// The task ends with `result`: `failed` when it is a tool error.
    fn finish(&mut self, result: Value) {
        let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
        self.status = if failed { "failed" } else { "completed" };
        self.result = Some(result);
    }

    /// The underlying call's result, for `tasks/result` (with the related task).
    fn final_result(&self, id: &str) -> Value {
        let mut result = self.result.clone().unwrap_or_else(|| {
            json!({
                "content": [{"type": "text", "text": format!("slow_job done after {} polls", self.polls)}],
                "isError": false,
            })
        });
        result["_meta"] = json!({ RELATED_TASK: {"taskId": id} });
        result
    }
}

fn reply(id: &Value, answer: Result<Value, String>) -> String {
    match answer {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(message) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": message}})
        }
    }
    .to_string()
}

/// The task store and the wire hooks around it.
#[derive(Clone, Default)]
pub struct TaskWire {
    jobs: Arc<Mutex<BTreeMap<String, Job>>>,
    regresses: bool,
    /// The client declared `elicitation` in `initialize`.
    client_elicits: Arc<AtomicBool>,
}

impl TaskWire {
    pub fn new(regresses: bool) -> Self {
        Self {
            jobs: Arc::default(),
            regresses,
            client_elicits: Arc::default(),
        }
    }

    /// The lines to write for a line this store takes (a task-augmented `slow_job` or
    /// `approve_job` call, `tasks/*`, the client's answer to a task's elicitation; none
    /// when a reply waits), or `None`: the line goes on to rmcp.
    pub fn inbound(&self, message: &Value) -> Option<Vec<String>> {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return self.answered(message);
        };
        let params = message.get("params").cloned().unwrap_or(json!({}));
        if method == "initialize" {
            let elicits = params
                .pointer("/capabilities/elicitation")
                .is_some_and(|v| !v.is_null());
            self.client_elicits.store(elicits, Ordering::Relaxed);
            return None;
        }
        let id = message.get("id")?.clone();
        let answer = match method {
            "tools/call" => {
                let name = params.get("name")?.as_str()?;
                if name != TOOL && name != APPROVE_TOOL {
                    return None;
                }
                let task = params.get("task")?;
                Ok(self.create(&params, task))
            }
            "tasks/result" => {
                let task_id = params.get("taskId").and_then(Value::as_str).unwrap_or("");
                if let Some(lines) = self.ask(task_id, &id) {
                    return Some(lines);
                }
                self.about(method, task_id)
            }
            "tasks/get" | "tasks/cancel" => {
                let task_id = params.get("taskId").and_then(Value::as_str).unwrap_or("");
                self.about(method, task_id)
            }
            "tasks/list" => {
                let jobs = self.jobs.lock().expect("lock");
                let tasks: Vec<Value> = jobs.iter().map(|(id, j)| j.task(id)).collect();
                Ok(json!({"tasks": tasks}))
            }
            _ => return None,
        };
        Some(vec![reply(&id, answer)])
    }

    /// `tasks/result` for an `approve_job` task in `input_required`: the `elicitation/create`
    /// (once), and the reply waits for the client's answer. `None`: any other task or
    /// status, answered at once.
    fn ask(&self, task_id: &str, result_id: &Value) -> Option<Vec<String>> {
        let mut jobs = self.jobs.lock().expect("lock");
        let job = jobs.get_mut(task_id)?;
        if job.status != "input_required" {
            return None;
        }
        let asking = job.asks.as_mut()?;
        asking.waiting.push(result_id.clone());
        if std::mem::replace(&mut asking.sent, true) {
            return Some(Vec::new());
        }
        let mut params = crate::interactive::confirm_params(&asking.action);
        params["_meta"] = json!({ RELATED_TASK: {"taskId": task_id} });
        let request = json!({
            "jsonrpc": "2.0",
            "id": format!("{ASK_ID_PREFIX}{task_id}"),
            "method": "elicitation/create",
            "params": params,
        });
        Some(vec![request.to_string()])
    }

    /// The client's answer to a task's `elicitation/create`: the task ends, and the
    /// `tasks/result` requests waiting get its result. `None`: not an answer to one.
    fn answered(&self, message: &Value) -> Option<Vec<String>> {
        let task_id = message.get("id")?.as_str()?.strip_prefix(ASK_ID_PREFIX)?;
        let mut jobs = self.jobs.lock().expect("lock");
        let job = jobs.get_mut(task_id)?;
        let asking = job.asks.as_mut().filter(|a| a.sent)?;
        let waiting = std::mem::take(&mut asking.waiting);
        if job.status != "input_required" {
            return Some(Vec::new()); // cancelled meanwhile
        }
        let related = |result: &Value| {
            result
                .get("_meta")
                .and_then(|m| m.get(RELATED_TASK))
                .and_then(|r| r.get("taskId"))
                .and_then(Value::as_str)
                == Some(task_id)
        };
        let answer = match (message.get("result"), message.get("error")) {
            // "All requests, notifications, and responses related to a task MUST include
            // the `io.modelcontextprotocol/related-task` key in their `_meta` field".
            (Some(result), _) if !related(result) => Err(format!(
                "the answer is not tied to the task (no `_meta` `{RELATED_TASK}` with its taskId)"
            )),
            (Some(result), _) => Ok(result.clone()),
            (None, Some(error)) => Err(format!(
                "{} {}",
                error.get("code").unwrap_or(&Value::Null),
                error.get("message").and_then(Value::as_str).unwrap_or("")
            )),
            (None, None) => Err("an answer with neither result nor error".into()),
        };
        let result = crate::interactive::approval_outcome(answer);
        job.finish(serde_json::to_value(result).unwrap_or(Value::Null));
        let result = job.final_result(task_id);
        Some(
            waiting
                .iter()
                .map(|id| reply(id, Ok(result.clone())))
                .collect(),
        )
    }

    fn create(&self, params: &Value, task: &Value) -> Value {
        let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
        let approve = params.get("name").and_then(Value::as_str) == Some(APPROVE_TOOL);
        let forever = arguments.get("forever").and_then(Value::as_bool) == Some(true);
        let default_polls = if approve { 1 } else { 2 };
        let polls = arguments
            .get("polls")
            .and_then(Value::as_u64)
            .unwrap_or(default_polls);
        let asks = approve.then(|| Asking {
            action: arguments
                .get("action")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            sent: false,
            waiting: Vec::new(),
        });
        let mut jobs = self.jobs.lock().expect("lock");
        let id = format!("task-{}", jobs.len() + 1);
        let job = Job {
            status: "working",
            polls_left: (!forever).then_some(polls),
            polls: 0,
            regress_pending: self.regresses,
            ttl: task.get("ttl").cloned().unwrap_or(json!(60_000)),
            asks,
            result: None,
        };
        let created = json!({"task": job.task(&id)});
        jobs.insert(id, job);
        created
    }

    fn about(&self, method: &str, task_id: &str) -> Result<Value, String> {
        let client_elicits = self.client_elicits.load(Ordering::Relaxed);
        let mut jobs = self.jobs.lock().expect("lock");
        let job = jobs
            .get_mut(task_id)
            .ok_or_else(|| format!("Unknown task: {task_id}"))?;
        match method {
            "tasks/get" => {
                job.polls += 1;
                if job.status == "completed" && job.regress_pending {
                    // The defect: a terminal status is not final.
                    job.regress_pending = false;
                    job.status = "working";
                } else if job.status == "working" {
                    match &mut job.polls_left {
                        Some(0) => job.polls_done(client_elicits),
                        Some(n) => {
                            *n -= 1;
                            if *n == 0 {
                                job.polls_done(client_elicits);
                            }
                        }
                        None => {}
                    }
                }
                Ok(job.task(task_id))
            }
            "tasks/cancel" => {
                if matches!(job.status, "completed" | "failed" | "cancelled") {
                    return Err(format!("Task {task_id} is already {}", job.status));
                }
                job.status = "cancelled";
                Ok(job.task(task_id))
            }
            _ => match job.status {
                "completed" | "failed" => Ok(job.final_result(task_id)),
                status => Err(format!("Task {task_id} is {status}, it has no result")),
            },
        }
    }

    /// The `initialize` result gains the server's `tasks` capability; `approve_job`'s
    /// listing, its `execution`.
    pub fn outbound(&self, line: &str) -> Option<String> {
        if line.contains(APPROVE_TOOL) && line.contains("\"tools\"") {
            let mut message: Value = serde_json::from_str(line).ok()?;
            let tool = message
                .pointer_mut("/result/tools")?
                .as_array_mut()?
                .iter_mut()
                .find(|t| t["name"] == APPROVE_TOOL)?
                .as_object_mut()?;
            tool.insert("execution".into(), json!({"taskSupport": "optional"}));
            return Some(message.to_string());
        }
        if !line.contains("\"protocolVersion\"") || !line.contains("\"serverInfo\"") {
            return None;
        }
        let mut message: Value = serde_json::from_str(line).ok()?;
        let capabilities = message
            .pointer_mut("/result/capabilities")?
            .as_object_mut()?;
        capabilities.insert(
            "tasks".into(),
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        );
        Some(message.to_string())
    }
}
