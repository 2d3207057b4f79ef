//! The project's local model server (`examples/model-server`), started on a free port of
//! 127.0.0.1 for a test and stopped on drop.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The local model server, stopped on drop.
pub struct ModelServer {
    child: Child,
    pub url: String,
}

impl ModelServer {
    pub fn start(flags: &[&str]) -> ModelServer {
        // Built with the workspace's binaries (see `common::example_server`).
        let bin = super::example_server().with_file_name("mcpspec-model-server");
        let mut child = Command::new(bin)
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("model server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("listening line");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        ModelServer { child, url }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
