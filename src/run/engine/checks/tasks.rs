//! A task's status moves only forward (`task_status_forward`; 2025-11-25
//! `basic/utilities/tasks`, Task Status Lifecycle: "Tasks with a `completed`, `failed`, or
//! `cancelled` status are in a terminal state and MUST NOT transition to any other status").
//! Each allowed tool (read-only or `safe_tools`) whose listing allows tasks
//! (`execution.taskSupport`) is called as a task with example arguments and polled to its
//! end, then twice more: every status after a terminal one must be that same status.

use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde_json::json;

use super::calls::{CallCtx, allowed_tools};
use super::outcome::CheckOutcome;
use crate::language::dsl::TaskRun;
use crate::protocol::{methods, tasks};
use crate::results::outcome::Finding;
use crate::run::argsgen;
use crate::run::client::Connection;
use crate::run::engine::tasks::{Bounds, augmented, carry, describe};

/// `tasks/get` polls after the terminal status.
const POLLS_AFTER_TERMINAL: u32 = 2;

pub async fn task_status_forward(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    if !tasks::server_runs_tool_calls(&conn.negotiated.capabilities) {
        return Ok(CheckOutcome::Skip(
            "the server does not declare task-augmented tools/call (`capabilities.tasks.requests.tools.call`)".into(),
        ));
    }
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(tools) => tools,
        Err(other) => return Ok(other),
    };
    let run = TaskRun {
        poll_interval: Duration::from_millis(50),
        max_polls: 200,
        ..TaskRun::default()
    };
    let mut findings = Vec::new();
    let mut judged = 0;
    for tool in tools.iter().filter(|t| tasks::tool_supports_tasks(&t.def)) {
        let Some(arguments) = argsgen::example(&tool.input_schema()) else {
            continue;
        };
        let params = json!({"name": tool.name, "arguments": arguments});
        let bounds = Bounds {
            timeout: ctx.timeout,
            started: Instant::now(),
            after_terminal: POLLS_AFTER_TERMINAL,
        };
        let id = conn.next_id();
        let out = conn.build(
            methods::TOOLS_CALL,
            Some(augmented(Some(&params), &run)),
            Some(id),
            &IndexMap::new(),
            &IndexMap::new(),
            ctx.timeout,
        );
        let created = match conn.send(&out).await {
            Ok(ex) => ex,
            Err(e) => {
                conn.note(format!("`tools/call {}` as a task failed: {e}", tool.name));
                continue;
            }
        };
        let ex = match carry(conn, created, &run, &bounds).await {
            Ok(ex) => ex,
            Err(e) => {
                conn.note(format!("`{}` as a task: {e}", tool.name));
                continue;
            }
        };
        if ex.task_statuses.is_empty() {
            conn.note(format!("`{}` answered no task", tool.name));
            continue;
        }
        judged += 1;
        let went_back = ex
            .task_statuses
            .windows(2)
            .find(|pair| !tasks::moves_forward(&pair[0], &pair[1]));
        if let Some(pair) = went_back {
            findings.push(Finding::new(
                format!(
                    "`tools/call {}` as a task: its status went from `{}` (terminal) to `{}`",
                    tool.name, pair[0], pair[1]
                ),
                "a terminal status (completed, failed, cancelled) stays".to_string(),
                describe(&ex.task_statuses),
            ));
        }
    }
    Ok(if judged == 0 {
        CheckOutcome::Skip("no allowed tool ran as a task (none lists `execution.taskSupport` optional or required, or none answered a task)".into())
    } else if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    })
}
