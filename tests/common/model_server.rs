//! The project's local model server (`examples/model-server`) for eval tests: started on a
//! free port of 127.0.0.1, stopped on drop.

use std::path::Path;
use std::process::{Child, Command};

/// The local model server, stopped on drop.
pub struct ModelServer {
    child: Child,
    pub url: String,
}

impl ModelServer {
    pub fn start(flags: &[&str]) -> ModelServer {
        // Built with the workspace's binaries (see `common::example_server`).
        let mut cmd = Command::new(super::example_server().with_file_name("mcpspec-model-server"));
        cmd.args(flags);
        let super::Listening { child, url } = super::Listening::start(cmd);
        ModelServer { child, url }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mcpspec eval run SET --stdio TARGET` through `model`, its results JSON written to `json`;
/// profile `local` unless `extra` names a `--model`.
pub fn eval_run(
    set: &str,
    target: &str,
    model: &ModelServer,
    json: &Path,
    extra: &[&str],
) -> super::Run {
    let mut args = vec![
        "eval",
        "run",
        set,
        "--stdio",
        target,
        "--base-url",
        &model.url,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    if !args.contains(&"--model") {
        args.extend(["--model", "local"]);
    }
    super::run(&args)
}
