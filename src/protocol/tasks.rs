//! The tasks utility of 2025-11-25 (`basic/utilities/tasks`; schema `TaskAugmentedRequestParams`,
//! `CreateTaskResult`, `Task`, `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list`,
//! `notifications/tasks/status`). A requestor adds `task: {ttl?}` to a request's params; the
//! receiver answers at once with a `CreateTaskResult` (`{task: Task}`), the requestor polls
//! `tasks/get` until a terminal status and fetches the underlying result with `tasks/result`.
//! 2026-07-28 moved tasks to the `io.modelcontextprotocol/tasks` extension (SEP-2663), which
//! its schema only names (see [`MODERN_EXTENSION`]).

use serde_json::Value;

pub const TASKS_GET: &str = "tasks/get";
pub const TASKS_RESULT: &str = "tasks/result";
pub const TASKS_CANCEL: &str = "tasks/cancel";
pub const TASKS_LIST: &str = "tasks/list";
pub const NOTIFICATIONS_TASKS_STATUS: &str = "notifications/tasks/status";

/// The request params key that asks for task-augmented execution (`TaskMetadata`).
pub const TASK: &str = "task";
/// `TaskMetadata.ttl` and `Task.ttl`: retention from creation, in milliseconds.
pub const TTL: &str = "ttl";
pub const TASK_ID: &str = "taskId";
pub const STATUS: &str = "status";
pub const STATUS_MESSAGE: &str = "statusMessage";
/// `Task.pollInterval`: the receiver's suggested polling interval, in milliseconds.
pub const POLL_INTERVAL: &str = "pollInterval";
/// The capability key (client and server) and, under it, `requests.tools.call`.
pub const CAPABILITY: &str = "tasks";
pub const CAPABILITY_TOOLS_CALL: &str = "/tasks/requests/tools/call";
/// A tool's `execution.taskSupport`: `forbidden` (the default), `optional`, `required`.
pub const TOOL_TASK_SUPPORT: &str = "/execution/taskSupport";
/// `_meta` key associating a message with a task (`RelatedTaskMetadata`).
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";
/// The extension id of 2026-07-28 (SEP-2663). The pinned 2026-07-28 schema names it only
/// as an example key of `ServerCapabilities.extensions`; its methods and `Task` are in the
/// extension's own schema (modelcontextprotocol/ext-tasks), not pinned here.
pub const MODERN_EXTENSION: &str = "io.modelcontextprotocol/tasks";

pub const WORKING: &str = "working";
pub const INPUT_REQUIRED: &str = "input_required";
pub const COMPLETED: &str = "completed";
pub const FAILED: &str = "failed";
pub const CANCELLED: &str = "cancelled";

/// Every `TaskStatus`.
pub const STATUSES: &[&str] = &[WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED];

/// `completed`, `failed` and `cancelled` are terminal: "Tasks with a completed, failed, or
/// cancelled status are in a terminal state and MUST NOT transition to any other status".
pub fn is_terminal(status: &str) -> bool {
    matches!(status, COMPLETED | FAILED | CANCELLED)
}

/// Whether a task may go from `from` to `to` (the same status is no transition): never out
/// of a terminal status; `working` ⇄ `input_required`, and either to a terminal one.
pub fn moves_forward(from: &str, to: &str) -> bool {
    from == to || !is_terminal(from)
}

/// The `Task` of a `CreateTaskResult` (`{task: …}`) or of a `tasks/get` / `tasks/cancel`
/// result (the task itself), if the value is one.
pub fn task_of(result: &Value) -> Option<&Value> {
    let task = result.get(TASK).filter(|t| t.is_object()).unwrap_or(result);
    task.get(TASK_ID)?.as_str()?;
    Some(task)
}

/// A task's status, if it has one.
pub fn status_of(task: &Value) -> Option<&str> {
    task.get(STATUS).and_then(Value::as_str)
}

/// Whether server capabilities declare task-augmented `tools/call`.
pub fn server_runs_tool_calls(capabilities: &Value) -> bool {
    capabilities.pointer(CAPABILITY_TOOLS_CALL).is_some()
}

/// Whether a listed tool may be called as a task (`optional` or `required`).
pub fn tool_supports_tasks(tool: &Value) -> bool {
    matches!(
        tool.pointer(TOOL_TASK_SUPPORT).and_then(Value::as_str),
        Some("optional" | "required")
    )
}

/// The client's result for a server request tied to a task keeps the tie: "All requests,
/// notifications, and responses related to a task MUST include the
/// `io.modelcontextprotocol/related-task` key in their `_meta` field" (2025-11-25
/// basic/utilities/tasks, Associating Task-Related Messages). A request with none leaves
/// `result` as it is.
pub fn relate_answer(request: &Value, result: &mut Value) {
    let Some(related) = request
        .pointer("/params/_meta")
        .and_then(|meta| meta.get(RELATED_TASK_META))
    else {
        return;
    };
    if let Some(result) = result.as_object_mut()
        && let Some(meta) = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Default::default()))
            .as_object_mut()
    {
        meta.insert(RELATED_TASK_META.into(), related.clone());
    }
}

/// Statuses with consecutive repeats collapsed: `[working, working, completed]` is
/// `[working, completed]`.
pub fn collapsed<'a>(statuses: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for s in statuses {
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_statuses_are_final() {
        assert!(moves_forward(WORKING, COMPLETED));
        assert!(moves_forward(INPUT_REQUIRED, WORKING));
        assert!(moves_forward(COMPLETED, COMPLETED));
        assert!(!moves_forward(COMPLETED, WORKING));
        assert!(!moves_forward(CANCELLED, COMPLETED));
        assert_eq!(
            collapsed([WORKING, WORKING, COMPLETED]),
            [WORKING, COMPLETED]
        );
    }

    #[test]
    fn an_answer_to_a_task_request_is_tied_to_the_task() {
        let related = serde_json::json!({"taskId": "t1"});
        let request = serde_json::json!({"method": "elicitation/create",
            "params": {"_meta": {RELATED_TASK_META: related}}});
        let mut result = serde_json::json!({"action": "accept"});
        relate_answer(&request, &mut result);
        assert_eq!(result["_meta"][RELATED_TASK_META], related);
        let mut plain = serde_json::json!({"action": "accept"});
        relate_answer(&serde_json::json!({"params": {}}), &mut plain);
        assert_eq!(plain, serde_json::json!({"action": "accept"}));
    }
}
