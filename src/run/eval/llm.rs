//! Model clients: one turn of a conversation with tools, over OpenAI-compatible Chat
//! Completions (OpenAI, Azure OpenAI, vLLM, llama.cpp, Ollama, LM Studio) or Anthropic
//! Messages. The conversation is kept API-neutral ([`Msg`]) and mapped to each wire shape
//! per request ([`super::wire`]). Retries with backoff on 429/5xx, honouring
//! `Retry-After`. The key goes only into the request headers. Every turn is played on the
//! client's tape (`--record` / `--replay`, see [`super::tape`]).

use std::time::Duration;

use serde_json::Value;

use super::conversation::{ApiError, Msg, ToolSpec, Turn, TurnAt};
use super::profile::{Profile, public_url};
use super::results::ModelApi;
use super::set::doc::KeyHeader;
use super::tape::Tape;
use super::wire::parse_reply;

/// Retries of one request after a 429 or 5xx.
pub const MAX_RETRIES: u32 = 4;
/// First backoff; doubled per retry, capped at [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// Longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

pub struct ModelClient {
    http: reqwest::Client,
    profile: Profile,
    key: Option<String>,
    url: reqwest::Url,
    /// `--max-cost` in USD, and what the run has spent so far (estimated from `price`);
    /// shared with the judge's client, whose spend counts against the same cap.
    budget: Option<std::sync::Arc<CostBudget>>,
    /// `--record` / `--replay` (see [`super::tape`]).
    tape: Option<Tape>,
    /// A judge's client: `--model-timeout` does not apply to it, its timeout message says so.
    judge: bool,
    /// `--max-api-failures` (see [`super::breaker`]).
    breaker: Option<std::sync::Arc<super::breaker::Breaker>>,
}

/// A run's `--max-cost` and its estimated spend so far, in USD.
#[derive(Debug)]
pub struct CostBudget {
    max: f64,
    spent: std::sync::Mutex<f64>,
}

/// The endpoint URL: `/v1` is added to a base URL with no path, then the API's path; a
/// query (Azure's `?api-version=`) stays a query.
pub fn endpoint(api: ModelApi, base: &str) -> Result<reqwest::Url, String> {
    let mut url = reqwest::Url::parse(base.trim())
        .map_err(|e| format!("the model base URL {} is not a URL: {e}", public_url(base)))?;
    let mut path = url.path().trim_end_matches('/').to_string();
    if path.is_empty() {
        path.push_str("/v1");
    }
    path.push_str(match api {
        ModelApi::Openai => "/chat/completions",
        ModelApi::Anthropic => "/messages",
    });
    url.set_path(&path);
    Ok(url)
}

impl ModelClient {
    pub fn new(profile: Profile, key: Option<String>) -> Result<ModelClient, String> {
        crate::ground::tls::install_provider();
        let http = reqwest::Client::builder()
            .no_proxy()
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(profile.timeout)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let mut url = endpoint(profile.api, &profile.base_url)?;
        if key.is_some() {
            // One credential per request: with a key, userinfo in the base URL would also
            // go out as Basic auth (reqwest sends it), so it is dropped.
            let _ = url.set_username("");
            let _ = url.set_password(None);
        }
        Ok(ModelClient {
            http,
            profile,
            key,
            url,
            budget: None,
            tape: None,
            judge: false,
            breaker: None,
        })
    }

    /// Stop before a request that could take the run's estimated spend past `max_usd`
    /// (needs the profile's `price`).
    pub fn with_max_cost(mut self, max_usd: Option<f64>) -> ModelClient {
        self.budget = max_usd.map(|max| {
            std::sync::Arc::new(CostBudget {
                max,
                spent: std::sync::Mutex::new(0.0),
            })
        });
        self
    }

    /// Spend from (and stop at) another client's budget: the judge's requests count
    /// against the run's `--max-cost`.
    pub fn sharing_budget_of(mut self, other: &ModelClient) -> ModelClient {
        self.budget = other.budget.clone();
        // A breaker of the same size, of its own: another API's failures.
        self.breaker = other
            .breaker
            .as_ref()
            .map(|b| std::sync::Arc::new(super::breaker::Breaker::new(b.max())));
        self
    }

    /// Stop the run after `max` model requests failed in a row (`None`: never).
    pub fn with_breaker(mut self, max: Option<u32>) -> ModelClient {
        self.breaker = max.map(|m| std::sync::Arc::new(super::breaker::Breaker::new(m)));
        self
    }

    /// This client grades answers (see [`super::judge`]).
    pub fn as_judge(mut self) -> ModelClient {
        self.judge = true;
        self
    }

    /// Refuse a request whose worst case (its input at about 4 characters a token, plus
    /// `maxTokens` of output) would pass the cap, so the run never spends past it.
    fn check_budget(&self, body: &Value) -> Result<(), ApiError> {
        let (Some(budget), Some(price)) = (&self.budget, self.profile.price) else {
            return Ok(());
        };
        let max = &budget.max;
        let worst = price.cost(
            body.to_string().len().div_ceil(4) as u64,
            u64::from(self.profile.max_tokens),
        );
        let spent = *budget.spent.lock().unwrap();
        if spent + worst > *max {
            return Err(ApiError::Budget(format!(
                "stopped before spending more than --max-cost ${max}: ${spent:.4} spent so far, the next model request could cost up to ${worst:.4}"
            )));
        }
        Ok(())
    }

    fn charge(&self, turn: &Turn) {
        if let (Some(budget), Some(price)) = (&self.budget, self.profile.price) {
            *budget.spent.lock().unwrap() += price.cost(turn.input_tokens, turn.output_tokens);
        }
    }

    /// The request body for this conversation, in the profile's API's shape.
    pub fn body(&self, system: Option<&str>, msgs: &[Msg], tools: &[ToolSpec]) -> Value {
        super::wire::body(&self.profile, system, msgs, tools)
    }

    /// The header carrying the key, if there is one.
    pub fn auth_header(&self) -> Option<(&'static str, String)> {
        let key = self.key.as_ref()?;
        Some(match self.profile.key_header {
            KeyHeader::Bearer => ("authorization", format!("Bearer {key}")),
            KeyHeader::XApiKey => ("x-api-key", key.clone()),
            KeyHeader::ApiKey => ("api-key", key.clone()),
        })
    }

    /// A 401/403 said in terms of the key's source: the variable it came from, or that no
    /// key was configured at all.
    fn refused(&self, status: u16, message: &str) -> String {
        match (&self.key, &self.profile.key_env) {
            (Some(_), Some(var)) => format!(
                "the model API refused the key from the environment variable {var} (HTTP {status}): {message}"
            ),
            (Some(_), None) => {
                format!("the model API refused the key (HTTP {status}): {message}")
            }
            (None, _) => format!(
                "the model API requires a key (HTTP {status}) and the profile `{}` configures none: add `key: env:VARIABLE` to it or pass --api-key-env VARIABLE ({message})",
                self.profile.name
            ),
        }
    }

    /// The profile this client speaks for.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Record (or replay) the model turns of this client.
    pub fn with_tape(mut self, tape: Option<Tape>) -> ModelClient {
        self.tape = tape;
        self
    }

    pub fn tape(&self) -> Option<&Tape> {
        self.tape.as_ref()
    }

    /// One model turn at `at`: live, live and recorded, or replayed.
    pub async fn turn_at(
        &self,
        at: &TurnAt<'_>,
        system: Option<&str>,
        msgs: &[Msg],
        tools: &[ToolSpec],
    ) -> Result<Turn, ApiError> {
        self.turn_counted(at, system, msgs, tools).await.0
    }

    /// [`Self::turn_at`] and the retries it spent, also when it failed.
    pub async fn turn_counted(
        &self,
        at: &TurnAt<'_>,
        system: Option<&str>,
        msgs: &[Msg],
        tools: &[ToolSpec],
    ) -> (Result<Turn, ApiError>, u32) {
        let mut retries = 0;
        let turn = self
            .turn_on_counted(self.tape.as_ref(), at, system, msgs, tools, &mut retries)
            .await;
        (turn, retries)
    }

    /// One turn at `at` of this client, recorded on (or replayed from) `tape`: the judge's
    /// requests go on the tape of the model whose answers it grades.
    pub async fn turn_on(
        &self,
        tape: Option<&Tape>,
        at: &TurnAt<'_>,
        system: Option<&str>,
        msgs: &[Msg],
        tools: &[ToolSpec],
    ) -> Result<Turn, ApiError> {
        self.turn_on_counted(tape, at, system, msgs, tools, &mut 0)
            .await
    }

    /// [`Self::turn_on`], counting the retries in `retries` whether it succeeds or fails.
    async fn turn_on_counted(
        &self,
        tape: Option<&Tape>,
        at: &TurnAt<'_>,
        system: Option<&str>,
        msgs: &[Msg],
        tools: &[ToolSpec],
        retries: &mut u32,
    ) -> Result<Turn, ApiError> {
        match tape {
            None => {
                let body = self.body(system, msgs, tools);
                self.check_budget(&body)?;
                let reply = self.send_counted(&body, retries).await?;
                self.accept(&body, &reply, *retries)
            }
            Some(Tape::Replay(replayer)) => {
                let body = self.body(system, msgs, tools);
                let reply = replayer.answer(at, &body, self.profile().api, system.is_some())?;
                // Nothing was sent: no retries, whatever the recorded run needed.
                self.accept(&body, &reply, 0)
            }
            Some(Tape::Record(recorder)) => {
                let body = self.body(system, msgs, tools);
                self.check_budget(&body)?;
                let sent = self
                    .send_counted(&body, retries)
                    .await
                    .map(|reply| (reply, *retries));
                match &sent {
                    Ok((reply, retries)) => recorder.store(at, &body, Ok((reply, *retries))),
                    // A trial-level failure is part of what happened; a fatal one stops the
                    // run (the recording is then marked incomplete).
                    Err(ApiError::Failed(why)) => recorder.store(at, &body, Err(why)),
                    Err(_) => {}
                }
                let (reply, retries) = sent?;
                self.accept(&body, &reply, retries)
            }
        }
    }

    /// One model turn, with retries on 429/5xx.
    pub async fn turn(
        &self,
        system: Option<&str>,
        msgs: &[Msg],
        tools: &[ToolSpec],
    ) -> Result<Turn, ApiError> {
        let body = self.body(system, msgs, tools);
        self.check_budget(&body)?;
        let (reply, retries) = self.send(&body).await?;
        self.accept(&body, &reply, retries)
    }

    /// One model request with a body of the caller's (a sampling request's options
    /// added): the reply's JSON and its turn, within the budget, with retries.
    pub async fn reply(&self, body: &Value) -> Result<(Value, Turn), ApiError> {
        self.check_budget(body)?;
        let (reply, retries) = self.send(body).await?;
        let turn = self.accept(body, &reply, retries)?;
        Ok((reply, turn))
    }

    /// A successful reply (live or recorded) to `body` as a turn, charged to the
    /// `--max-cost` budget (estimated from sizes when the API reported no `usage`).
    pub fn accept(&self, body: &Value, reply: &Value, retries: u32) -> Result<Turn, ApiError> {
        let mut turn = parse_reply(self.profile.api, reply).map_err(ApiError::Failed)?;
        turn.retries = retries;
        super::estimate::fill(&mut turn, body);
        self.charge(&turn);
        Ok(turn)
    }

    /// The request for one body: the URL, the one credential, the API's headers.
    fn request(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut req = self.http.post(self.url.clone()).json(body);
        if let Some((name, value)) = self.auth_header() {
            req = req.header(name, value);
        }
        if self.profile.api == ModelApi::Anthropic {
            req = req.header("anthropic-version", "2023-06-01");
        }
        req
    }

    /// Post one request body, with retries on 429/5xx: the reply's JSON and the retries.
    pub async fn send(&self, body: &Value) -> Result<(Value, u32), ApiError> {
        let mut retries = 0;
        let value = self.send_counted(body, &mut retries).await?;
        Ok((value, retries))
    }

    /// [`Self::send`], counting its retries in `attempt` whether it succeeds or fails (a
    /// failed trial records the retries it spent); through the circuit breaker.
    async fn send_counted(&self, body: &Value, attempt: &mut u32) -> Result<Value, ApiError> {
        let sent = self.post(body, attempt).await;
        match &self.breaker {
            Some(b) => b.pass(sent),
            None => sent,
        }
    }

    async fn post(&self, body: &Value, attempt: &mut u32) -> Result<Value, ApiError> {
        loop {
            let resp = match self.request(body).send().await {
                Ok(r) => r,
                Err(e) if e.is_connect() => {
                    // Userinfo and query can carry a key: neither is shown.
                    return Err(ApiError::Unreachable(format!(
                        "cannot reach the model API at {}: {}",
                        public_url(self.url.as_str()),
                        error_chain(e)
                    )));
                }
                Err(e) if e.is_timeout() => return Err(self.timed_out("")),
                Err(e) => {
                    return Err(ApiError::Failed(format!(
                        "model request failed: {}",
                        error_chain(e)
                    )));
                }
            };
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| super::retry::retry_after(v, chrono::Utc::now()))
                .map(|wait| wait.min(MAX_RETRY_AFTER));
            let text = match super::caps::read_body(resp).await {
                Ok(text) => text,
                // The status came, the body stalled before its end.
                Err(super::caps::BodyError::Timeout) => {
                    return Err(self.timed_out("its reply body"));
                }
                Err(e) => return Err(ApiError::Failed(e.to_string())),
            };
            if (200..300).contains(&status) {
                let value: Value = serde_json::from_str(&text).map_err(|e| {
                    ApiError::Failed(format!(
                        "the model API answered with a body that is not JSON ({e}): {}",
                        crate::ground::redact::shorten(&text, 200)
                    ))
                })?;
                return Ok(value);
            }
            let message = api_error_message(&text);
            if status == 404 {
                // A wrong model name or path fails every request alike: a setup error.
                return Err(ApiError::Unreachable(format!(
                    "the model API answered HTTP 404 at {}: {message} (check the `model` ({}) and `baseUrl` of profile `{}`)",
                    public_url(self.url.as_str()),
                    self.profile.model,
                    self.profile.name
                )));
            }
            if status == 401 || status == 403 {
                return Err(ApiError::Auth(self.refused(status, &message)));
            }
            let retryable = status == 429 || status == 529 || (500..600).contains(&status);
            if retryable && *attempt < MAX_RETRIES {
                let backoff = FIRST_BACKOFF.saturating_mul(1 << *attempt).min(MAX_BACKOFF);
                tokio::time::sleep(retry_after.unwrap_or(backoff)).await;
                *attempt += 1;
                continue;
            }
            let tries = if retryable {
                format!(" after {} attempts", *attempt + 1)
            } else {
                String::new()
            };
            return Err(ApiError::Failed(format!(
                "the model API answered HTTP {status}{tries}: {message}"
            )));
        }
    }
}

impl ModelClient {
    /// The request took longer than the profile's `timeout`; `part` says what was late
    /// when it was not the answer's start (`its reply body`).
    fn timed_out(&self, part: &str) -> ApiError {
        ApiError::Failed(format!(
            "the model API did not answer within {}{} ({})",
            humantime::format_duration(self.profile.timeout),
            if part.is_empty() {
                String::new()
            } else {
                format!(": {part} stalled")
            },
            if self.judge {
                "the judge profile's `timeout`; `--model-timeout` applies to the model under test only"
            } else {
                "the profile's `timeout`, or `--model-timeout`"
            }
        ))
    }
}

/// The error and its causes, without the request URL (its userinfo or query may hold a key).
fn error_chain(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut out = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// `error.message` of either API's error body, else the body cut short.
fn api_error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .unwrap_or_else(|| crate::ground::redact::shorten(body.trim(), 200))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::run::eval::conversation::Call;
    use crate::run::eval::profile::DEFAULT_REQUEST_TIMEOUT;

    #[test]
    fn endpoints_add_v1_only_without_a_path() {
        let url = |api, base| endpoint(api, base).unwrap().to_string();
        assert_eq!(
            url(ModelApi::Openai, "http://localhost:11434/v1"),
            "http://localhost:11434/v1/chat/completions"
        );
        assert_eq!(
            url(ModelApi::Openai, "http://127.0.0.1:9"),
            "http://127.0.0.1:9/v1/chat/completions"
        );
        assert_eq!(
            url(ModelApi::Anthropic, "https://api.anthropic.com/"),
            "https://api.anthropic.com/v1/messages"
        );
        // Azure: the query stays a query, after the path.
        assert_eq!(
            url(
                ModelApi::Openai,
                "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21"
            ),
            "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
        );
    }

    fn profile(api: ModelApi) -> Profile {
        Profile {
            api,
            name: "p".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            timeout: DEFAULT_REQUEST_TIMEOUT,
            price: None,
            key_env: None,
            key_header: KeyHeader::Bearer,
            temperature: Some(0.2),
            seed: Some(7),
            max_turns: 3,
            max_calls_per_turn: 16,
            max_tokens: 99,
        }
    }

    #[test]
    fn temperature_seed_and_tools_are_sent() {
        let tools = [ToolSpec {
            name: "get_weather".into(),
            description: "d".into(),
            schema: json!({"type": "object"}),
        }];
        let msgs = [
            Msg::User("hi".into()),
            Msg::Assistant {
                text: None,
                calls: vec![Call {
                    id: "c1".into(),
                    name: "get_weather".into(),
                    arguments: Ok(json!({"city": "Oslo"})),
                }],
            },
            Msg::ToolResults(vec![("c1".into(), "sunny".into(), true)]),
        ];
        let c = ModelClient::new(profile(ModelApi::Openai), None).unwrap();
        let b = c.body(Some("sys"), &msgs, &tools);
        assert_eq!(
            (b["temperature"].clone(), b["seed"].clone()),
            (json!(0.2), json!(7))
        );
        assert_eq!(b["max_completion_tokens"], 99);
        assert_eq!(
            b["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(
            b["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"city\":\"Oslo\"}"
        );
        assert_eq!(
            b["messages"][3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "sunny"})
        );
        assert_eq!(
            b["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
        let c = ModelClient::new(profile(ModelApi::Anthropic), None).unwrap();
        let b = c.body(Some("sys"), &msgs, &tools);
        assert_eq!(b["temperature"], json!(0.2));
        assert!(b.get("seed").is_none(), "the Messages API has no seed");
        assert_eq!(
            (b["system"].clone(), b["max_tokens"].clone()),
            (json!("sys"), json!(99))
        );
        assert_eq!(
            b["messages"][1]["content"][0]["input"],
            json!({"city": "Oslo"})
        );
        assert_eq!(
            b["messages"][2]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "sunny", "is_error": true})
        );
        assert_eq!(b["tools"][0]["input_schema"], json!({"type": "object"}));
    }

    #[test]
    fn the_key_goes_in_the_profiles_header() {
        let mut p = profile(ModelApi::Openai);
        let c = ModelClient::new(p.clone(), None).unwrap();
        assert_eq!(c.auth_header(), None);
        for (header, want) in [
            (KeyHeader::Bearer, ("authorization", "Bearer k1")),
            (KeyHeader::XApiKey, ("x-api-key", "k1")),
            (KeyHeader::ApiKey, ("api-key", "k1")),
        ] {
            p.key_header = header;
            let c = ModelClient::new(p.clone(), Some("k1".into())).unwrap();
            let (name, value) = c.auth_header().unwrap();
            assert_eq!((name, value.as_str()), want);
        }
    }

    #[test]
    fn userinfo_and_a_key_send_one_credential() {
        let mut p = profile(ModelApi::Openai);
        p.base_url = "http://user:secret@127.0.0.1:9/v1".into();
        // With a key: the key only, no Basic auth from the userinfo.
        let c = ModelClient::new(p.clone(), Some("k1".into())).unwrap();
        let req = c.request(&json!({})).build().unwrap();
        let auth: Vec<_> = req.headers().get_all("authorization").iter().collect();
        assert_eq!(auth, ["Bearer k1"], "{:?}", req.headers());
        assert_eq!(req.url().username(), "");
        assert_eq!(req.url().password(), None);
        // Without a key: the userinfo is the one credential (Basic).
        let c = ModelClient::new(p, None).unwrap();
        let req = c.request(&json!({})).build().unwrap();
        let auth: Vec<_> = req.headers().get_all("authorization").iter().collect();
        assert_eq!(auth.len(), 1, "{:?}", req.headers());
        assert!(auth[0].to_str().unwrap().starts_with("Basic "));
    }
}
