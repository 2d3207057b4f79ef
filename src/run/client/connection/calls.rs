//! The engine's own requests on a connection: a call and its result, every page of a list,
//! the tools.

use serde_json::{Value, json};

use super::Connection;
use super::transcript::{error_of, result_of};
use crate::protocol::fields::{self, Pages};
use crate::protocol::{ListKind, errors};
use crate::results::exchange::Exchange;
use crate::run::client::TransportError;

impl Connection {
    /// [`Connection::call`] of a request due at once (`what` it is, for the message): it
    /// waits [`Connection::prompt_wait`], not the whole timeout.
    pub async fn call_due_at_once(&mut self, method: &str, what: &str) -> Result<Value, String> {
        result_of(&self.exchange_due_at_once(method, what).await?)
    }

    /// The exchange of [`Connection::call_due_at_once`], whatever the server answered (a
    /// result or an error): `Err` only when it did not answer.
    pub async fn exchange_due_at_once(
        &mut self,
        method: &str,
        what: &str,
    ) -> Result<Exchange, String> {
        let prompt = self.prompt_wait(self.target.timeout).await;
        let id = self.next_id();
        let mut out = self.build_plain(method, None, Some(id));
        if let Some(p) = &prompt {
            out.timeout = p.wait;
        }
        match (self.send(&out).await, prompt) {
            (Ok(ex), _) => Ok(ex),
            (Err(TransportError::Timeout(d)), Some(p)) => Err(p.timed_out(d, what)),
            (Err(e), _) => Err(e.to_string()),
        }
    }

    /// Send a request built for this era and return its `result` (internal requests).
    pub async fn call(&mut self, method: &str, params: Option<Value>) -> Result<Value, String> {
        let id = self.next_id();
        let out = self.build_plain(method, params, Some(id));
        let ex = self.send(&out).await.map_err(|e| e.to_string())?;
        result_of(&ex)
    }

    /// Whether the server serves `method` at all: not when it answers -32601 (method not
    /// found); any other answer, error or not, counts as served.
    pub async fn serves(&mut self, method: &str) -> Result<bool, String> {
        let id = self.next_id();
        let out = self.build_plain(method, None, Some(id));
        let ex = self.send(&out).await.map_err(|e| e.to_string())?;
        Ok(!matches!(error_of(&ex), Some((code, _)) if code == errors::METHOD_NOT_FOUND))
    }

    /// All pages of a list method, merged (`key` is e.g. `tools`).
    pub async fn list_all(&mut self, method: &str, key: &str) -> Result<Vec<Value>, String> {
        let mut items = Vec::new();
        self.each_page(method, |result| {
            if let Some(page) = result.get(key).and_then(Value::as_array) {
                items.extend(page.iter().cloned());
            }
        })
        .await?;
        Ok(items)
    }

    /// Every page of a list method, in order, handed to `page` (the one walk of internal
    /// requests; a step's `paginate: true` follows the same [`Pages`] rule).
    pub async fn each_page(
        &mut self,
        method: &str,
        mut page: impl FnMut(&Value),
    ) -> Result<(), String> {
        let mut pages = Pages::new();
        let mut cursor: Option<Value> = None;
        loop {
            let params = cursor.take().map(|c| json!({ fields::CURSOR: c }));
            let result = self.call(method, params).await?;
            page(&result);
            match pages.after(method, &result)? {
                Some(next) => cursor = Some(next),
                None => return Ok(()),
            }
        }
    }

    /// The declared tools (fetched once, then cached).
    pub async fn tools(&mut self) -> Result<Vec<Value>, String> {
        if let Some(t) = &self.tools {
            return Ok(t.clone());
        }
        let tools = self
            .list_all(ListKind::Tools.method(), ListKind::Tools.result_key())
            .await?;
        self.tools = Some(tools.clone());
        Ok(tools)
    }
}
