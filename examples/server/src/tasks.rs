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

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};

pub const TOOL: &str = "slow_job";
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

/// `execution` of `slow_job`'s listing.
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
}

/// The task store and the wire hooks around it.
#[derive(Clone, Default)]
pub struct TaskWire {
    jobs: Arc<Mutex<BTreeMap<String, Job>>>,
    regresses: bool,
}

impl TaskWire {
    pub fn new(regresses: bool) -> Self {
        Self {
            jobs: Arc::default(),
            regresses,
        }
    }

    /// The reply to a line this store answers (a task-augmented `slow_job` call, `tasks/*`),
    /// or `None`: the line goes on to rmcp.
    pub fn inbound(&self, message: &Value) -> Option<String> {
        let method = message.get("method")?.as_str()?;
        let id = message.get("id")?.clone();
        let params = message.get("params").cloned().unwrap_or(json!({}));
        let answer = match method {
            "tools/call" => {
                if params.get("name")?.as_str()? != TOOL {
                    return None;
                }
                let task = params.get("task")?;
                Ok(self.create(&params, task))
            }
            "tasks/get" | "tasks/result" | "tasks/cancel" => {
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
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(message) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": message}})
            }
        };
        Some(reply.to_string())
    }

    fn create(&self, params: &Value, task: &Value) -> Value {
        let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
        let forever = arguments.get("forever").and_then(Value::as_bool) == Some(true);
        let polls = arguments.get("polls").and_then(Value::as_u64).unwrap_or(2);
        let mut jobs = self.jobs.lock().expect("lock");
        let id = format!("task-{}", jobs.len() + 1);
        let job = Job {
            status: "working",
            polls_left: (!forever).then_some(polls),
            polls: 0,
            regress_pending: self.regresses,
            ttl: task.get("ttl").cloned().unwrap_or(json!(60_000)),
        };
        let created = json!({"task": job.task(&id)});
        jobs.insert(id, job);
        created
    }

    fn about(&self, method: &str, task_id: &str) -> Result<Value, String> {
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
                        Some(0) => job.status = "completed",
                        Some(n) => {
                            *n -= 1;
                            if *n == 0 {
                                job.status = "completed";
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
                "completed" => Ok(json!({
                    "content": [{"type": "text", "text": format!("slow_job done after {} polls", job.polls)}],
                    "isError": false,
                    "_meta": {"io.modelcontextprotocol/related-task": {"taskId": task_id}},
                })),
                status => Err(format!("Task {task_id} is {status}, it has no result")),
            },
        }
    }

    /// The `initialize` result gains the server's `tasks` capability.
    pub fn outbound(&self, line: &str) -> Option<String> {
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
