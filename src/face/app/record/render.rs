//! A session as scenarios a person would write: steps named after what they do, ids
//! captured and templated into the later requests that use them, volatile values matched by
//! pattern, expectations from what the server answered, and the client's answers to the
//! server's requests as a `client:` script.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use regex::Regex;
use serde_json::Value;

use super::session::{Ask, Call, EraUsed, Outcome, Session};
use crate::face::app::init::yaml::{jsonpath_string, literal, quoted, scalar, slug};
use crate::language::assert::golden;
use crate::protocol::{ListKind, methods};
use crate::run::record::tape::placeholders;

/// What the expectations hold of each answer.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExpectMode {
    /// The answer's shape and its stable values (default).
    #[default]
    Shape,
    /// A golden file per answer (`snapshot:`), volatile parts sanitized.
    Golden,
    /// Every value of the answer (volatile ones by pattern).
    Exact,
}

/// How the session is cut into scenario files.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Split {
    /// One scenario for the whole session.
    #[default]
    Session,
    /// One scenario per tool called (with the earlier steps whose values it uses).
    Tool,
}

pub struct Options {
    pub name: String,
    pub expect: ExpectMode,
    pub split: Split,
}

/// A file to write, relative to the recording folder.
pub struct File {
    pub path: PathBuf,
    pub text: String,
}

pub struct Rendered {
    pub files: Vec<File>,
    pub notes: Vec<String>,
    /// Parameters the scenarios need (`--set NAME=env:VAR`), from the secrets scrubbed.
    pub parameters: BTreeSet<String>,
}

/// The folder of the scenario files, inside the recording folder.
pub const SCENARIO_DIR: &str = "scenarios";
/// At most this many expectations per step; the rest is left to a snapshot.
const MAX_EXPECTATIONS: usize = 24;
/// Strings longer than this are judged by type, not value.
const MAX_EQUALS_TEXT: usize = 300;

/// One step as it will be written.
struct Step {
    name: String,
    /// The tool a `tools/call` called.
    tool: Option<String>,
    /// `request:` as YAML (flow), templates in place.
    request: String,
    /// Expectation lines (flow mappings).
    expect: Vec<String>,
    comments: Vec<String>,
    /// `capture:` name → JSONPath.
    captures: BTreeMap<String, String>,
    /// Variables its request uses, by the step that captures them.
    uses: BTreeSet<usize>,
    /// A golden file: (name, text).
    golden: Option<(String, String)>,
}

/// A value a result held that a later request may send back (an id).
struct Candidate {
    value: String,
    step: usize,
    path: String,
    key: String,
    var: Option<String>,
}

pub fn render(session: &Session, opts: &Options) -> Rendered {
    let mut notes = Vec::new();
    let mut parameters = BTreeSet::new();
    let era = session.era.unwrap_or(EraUsed::Legacy);
    if session.era.is_none() {
        notes.push(
            "the client sent neither `initialize` nor a modern `_meta`: the scenarios are written for the legacy era".into(),
        );
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut vars_taken: BTreeSet<String> = BTreeSet::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut names_taken: BTreeMap<String, usize> = BTreeMap::new();
    for call in &session.calls {
        let index = steps.len();
        let mut uses = BTreeSet::new();
        let mut masked = false;
        let params = call.params.as_ref().map(|p| {
            templated(
                p,
                &mut candidates,
                &mut vars_taken,
                &mut uses,
                &mut parameters,
                &mut masked,
                &steps_tools(&steps),
            )
        });
        let base = readable_name(&step_name(call), &candidates);
        let n = names_taken.entry(base.clone()).or_insert(0);
        *n += 1;
        let name = if *n == 1 {
            base
        } else {
            format!("{base} #{n}")
        };
        let mut request = format!("{{ method: {}", scalar(&call.method));
        if let Some(p) = &params {
            request.push_str(&format!(", params: {p}"));
        }
        request.push_str(" }");
        let mut step = Step {
            name,
            tool: tool_of(call),
            request,
            expect: Vec::new(),
            comments: Vec::new(),
            captures: BTreeMap::new(),
            uses,
            golden: None,
        };
        if masked {
            step.comments.push(
                "a secret-shaped value the client sent is written as *** (the recording never holds it); put a parameter there".into(),
            );
        }
        let known: BTreeMap<String, String> = candidates
            .iter()
            .filter_map(|c| c.var.clone().map(|v| (c.value.clone(), v)))
            .collect();
        match &call.outcome {
            Outcome::Result(result) => {
                let mut known = Known {
                    vars: &known,
                    parameters: &mut parameters,
                    masked: false,
                };
                expectations(call, result, &mut known, opts.expect, &mut step);
                if known.masked {
                    step.comments.push(
                        "the answer held a secret-shaped value (*** in the recording): judged by type only".into(),
                    );
                }
                collect_candidates(result, index, &mut candidates);
            }
            Outcome::Error(error) => {
                let code = error.get("code").cloned().unwrap_or(Value::Null);
                step.expect.push(format!("error: {{ code: {code} }}"));
            }
            Outcome::Unanswered => {
                notes.push(format!(
                    "`{}` got no answer before the session ended: not written as a step",
                    step.name
                ));
                continue;
            }
        }
        steps.push(step);
    }
    // Captures go to the steps that produced the values later requests used.
    for c in &candidates {
        if let Some(var) = &c.var {
            steps[c.step].captures.insert(var.clone(), c.path.clone());
        }
    }
    let client = client_block(session, &mut notes);
    let mut files = Vec::new();
    let groups: Vec<(String, Vec<usize>)> = match opts.split {
        Split::Session => vec![(opts.name.clone(), (0..steps.len()).collect())],
        Split::Tool => by_tool(&steps, &opts.name),
    };
    for (id, members) in groups {
        let file = PathBuf::from(SCENARIO_DIR).join(format!("{id}.yaml"));
        let mut text = format!(
            "# Recorded by `mcpspec record`: {} of the session{}.\n",
            plural(members.len(), "step"),
            match &session.end {
                Some((end, detail)) => format!(" (it ended: {} — {detail})", end_word(*end)),
                None => String::new(),
            }
        );
        text.push_str(&format!("scenario: {}\n", scalar(&id)));
        text.push_str(&format!("eras: [{}]\n", era.label()));
        let used: BTreeSet<String> = members
            .iter()
            .flat_map(|&i| parameter_uses(&steps[i].request))
            .filter(|p| parameters.contains(p))
            .collect();
        if !used.is_empty() {
            let list: Vec<String> = used.iter().map(|p| scalar(p)).collect();
            text.push_str(&format!(
                "requires:\n  parameters: [{}]   # secrets the client sent: run with --set NAME=env:VAR\n",
                list.join(", ")
            ));
        }
        text.push_str(&client);
        text.push_str("steps:\n");
        for &i in &members {
            let step = &steps[i];
            for c in &step.comments {
                text.push_str(&format!("  # {c}\n"));
            }
            text.push_str(&format!("  - name: {}\n", quoted(&step.name)));
            text.push_str(&format!("    request: {}\n", step.request));
            if !step.expect.is_empty() {
                text.push_str("    expect:\n");
                for e in &step.expect {
                    text.push_str(&format!("      - {e}\n"));
                }
            }
            if !step.captures.is_empty() {
                text.push_str("    capture:\n");
                for (var, path) in &step.captures {
                    text.push_str(&format!("      {var}: {}\n", quoted(path)));
                }
            }
            if let Some((name, golden)) = &step.golden {
                files.push(File {
                    path: PathBuf::from(SCENARIO_DIR)
                        .join("__snapshots__")
                        .join(&id)
                        .join(format!("{name}.json")),
                    text: golden.clone(),
                });
            }
        }
        files.push(File { path: file, text });
    }
    if session.server_notifications > 0 {
        notes.push(format!(
            "{} from the server not turned into expectations (add `notifications:` expectations where they matter)",
            plural(session.server_notifications, "notification")
        ));
    }
    let sent: BTreeSet<&String> = session.client_notifications.iter().collect();
    if !sent.is_empty() {
        let list: Vec<&str> = sent.iter().map(|s| s.as_str()).collect();
        notes.push(format!(
            "notifications the client sent are not replayed: {}",
            list.join(", ")
        ));
    }
    if session.malformed > 0 {
        notes.push(format!(
            "{} on the wire were not JSON (forwarded as they were; see the tape)",
            plural(session.malformed, "line")
        ));
    }
    Rendered {
        files,
        notes,
        parameters,
    }
}

fn steps_tools(steps: &[Step]) -> Vec<Option<String>> {
    steps.iter().map(|s| s.tool.clone()).collect()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn end_word(end: crate::run::record::End) -> &'static str {
    use crate::run::record::End;
    match end {
        End::ClientClosed => "the client closed the session",
        End::ServerExited => "the server exited",
        End::ServerCrashed => "THE SERVER CRASHED",
        End::Interrupted => "interrupted",
    }
}

fn tool_of(call: &Call) -> Option<String> {
    (call.method == methods::TOOLS_CALL)
        .then(|| param_str(call, "name"))
        .flatten()
}

fn param_str(call: &Call, key: &str) -> Option<String> {
    call.params
        .as_ref()
        .and_then(|p| p.get(key))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A step's name: what it does, as a person would say it.
fn step_name(call: &Call) -> String {
    let arg = |k| param_str(call, k).unwrap_or_default();
    match call.method.as_str() {
        methods::TOOLS_CALL => format!("call {}", arg("name")),
        methods::RESOURCES_READ => format!("read {}", arg("uri")),
        methods::RESOURCES_SUBSCRIBE => format!("subscribe to {}", arg("uri")),
        methods::RESOURCES_UNSUBSCRIBE => format!("unsubscribe from {}", arg("uri")),
        methods::PROMPTS_GET => format!("get prompt {}", arg("name")),
        methods::LOGGING_SET_LEVEL => format!("set the log level to {}", arg("level")),
        methods::COMPLETION_COMPLETE => "complete an argument".into(),
        m => match ListKind::from_method(m) {
            Some(ListKind::Tools) => "list tools".into(),
            Some(ListKind::Resources) => "list resources".into(),
            Some(ListKind::ResourceTemplates) => "list resource templates".into(),
            Some(ListKind::Prompts) => "list prompts".into(),
            None => m.to_string(),
        },
    }
}

/// A step's name with the captured values it holds as `<variable>` and volatile parts as
/// `<uuid>` / `<timestamp>`: the same name on every recording.
fn readable_name(name: &str, candidates: &[Candidate]) -> String {
    let mut out = name.to_string();
    for c in candidates.iter().rev() {
        if let Some(var) = &c.var {
            if c.value.len() >= 4 && out.contains(&c.value) {
                out = out.replace(&c.value, &format!("<{var}>"));
            }
        }
    }
    let out = golden::UUID.replace_all(&out, "<uuid>");
    golden::TIMESTAMP
        .replace_all(&out, "<timestamp>")
        .into_owned()
}

static PARAM_USE: std::sync::LazyLock<Regex> =
    std::sync::LazyLock::new(|| Regex::new(r"\{\{ ([a-z0-9_]+) \}\}").expect("compiles"));

fn parameter_uses(request: &str) -> Vec<String> {
    PARAM_USE
        .captures_iter(request)
        .map(|c| c[1].to_string())
        .collect()
}

/// The params as YAML flow text: strings that held an earlier result's value or a scrubbed
/// secret become templates, every other string is sent as written.
#[allow(clippy::too_many_arguments)]
fn templated(
    v: &Value,
    candidates: &mut [Candidate],
    vars_taken: &mut BTreeSet<String>,
    uses: &mut BTreeSet<usize>,
    parameters: &mut BTreeSet<String>,
    masked: &mut bool,
    tools: &[Option<String>],
) -> String {
    match v {
        Value::String(s) => scalar(&template_string(
            s, candidates, vars_taken, uses, parameters, masked, tools,
        )),
        Value::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|i| templated(i, candidates, vars_taken, uses, parameters, masked, tools))
                .collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        scalar(&literal(k)),
                        templated(v, candidates, vars_taken, uses, parameters, masked, tools)
                    )
                })
                .collect();
            format!("{{ {} }}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// One string of a request as template text.
fn template_string(
    s: &str,
    candidates: &mut [Candidate],
    vars_taken: &mut BTreeSet<String>,
    uses: &mut BTreeSet<usize>,
    parameters: &mut BTreeSet<String>,
    masked: &mut bool,
    tools: &[Option<String>],
) -> String {
    if s.contains(crate::ground::redact::MASK) {
        *masked = true;
    }
    let mut pieces = Pieces::new(s);
    pieces.parameters(parameters);
    // The most recent value first: the latest `create` is the one a `get` means.
    for i in (0..candidates.len()).rev() {
        let value = candidates[i].value.clone();
        if !pieces.holds(&value) {
            continue;
        }
        let var = match &candidates[i].var {
            Some(v) => v.clone(),
            None => {
                let c = &candidates[i];
                let base = var_name(tools.get(c.step).cloned().flatten().as_deref(), &c.key);
                let mut name = base.clone();
                let mut n = 2;
                while !vars_taken.insert(name.clone()) {
                    name = format!("{base}_{n}");
                    n += 1;
                }
                candidates[i].var = Some(name.clone());
                name
            }
        };
        uses.insert(candidates[i].step);
        pieces.replace(&value, &var);
    }
    pieces.template()
}

/// A string cut into text and variables, written back as template text.
struct Pieces(Vec<(bool, String)>);

impl Pieces {
    fn new(s: &str) -> Pieces {
        Pieces(vec![(false, s.to_string())])
    }

    /// Whether a text piece is `value`, or holds it and it is long enough to be no accident.
    fn holds(&self, value: &str) -> bool {
        self.0
            .iter()
            .any(|(v, t)| !v && (t == value || (value.len() >= 8 && t.contains(value))))
    }

    /// Scrubbed secrets (`<param:NAME>`) become parameters.
    fn parameters(&mut self, parameters: &mut BTreeSet<String>) {
        let found: Vec<(String, String)> = self
            .0
            .iter()
            .filter(|(v, _)| !v)
            .flat_map(|(_, t)| {
                placeholders(t)
                    .map(|(whole, name)| (whole.to_string(), name.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        for (whole, name) in found {
            parameters.insert(name.clone());
            self.replace(&whole, &name);
        }
    }

    fn replace(&mut self, needle: &str, var: &str) {
        let mut out = Vec::new();
        for (is_var, text) in std::mem::take(&mut self.0) {
            if is_var || !text.contains(needle) {
                out.push((is_var, text));
                continue;
            }
            let mut rest = text.as_str();
            while let Some(at) = rest.find(needle) {
                if at > 0 {
                    out.push((false, rest[..at].to_string()));
                }
                out.push((true, var.to_string()));
                rest = &rest[at + needle.len()..];
            }
            if !rest.is_empty() {
                out.push((false, rest.to_string()));
            }
        }
        self.0 = out;
    }

    fn changed(&self) -> bool {
        self.0.iter().any(|(v, _)| *v)
    }

    /// Template text: a lone variable keeps its type (`"{{ id }}"`), text around variables is
    /// sent as written.
    fn template(&self) -> String {
        self.0
            .iter()
            .map(|(is_var, text)| {
                if *is_var {
                    format!("{{{{ {text} }}}}")
                } else {
                    literal(text)
                }
            })
            .collect()
    }
}

/// `create_note_id` from the tool and the key (`id`), `note_id` from `noteId`.
fn var_name(tool: Option<&str>, key: &str) -> String {
    let mut snake = String::new();
    for (i, c) in key.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            snake.push('_');
        }
        if c.is_ascii_alphanumeric() {
            snake.push(c.to_ascii_lowercase());
        } else if !snake.ends_with('_') {
            snake.push('_');
        }
    }
    let snake = snake.trim_matches('_').to_string();
    let generic = matches!(snake.as_str(), "id" | "uri" | "handle" | "" | "text");
    let name = match (generic, tool) {
        (true, Some(tool)) => format!(
            "{}_{}",
            slug(tool).replace('-', "_"),
            if snake.is_empty() { "value" } else { &snake }
        ),
        (true, None) => format!(
            "recorded_{}",
            if snake.is_empty() { "value" } else { &snake }
        ),
        (false, _) => snake,
    };
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v_{name}")
    } else {
        name
    }
}

static ID_KEY: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
    Regex::new(
        r"(?i)^(id|uri|handle|ref|key|cursor|token|session)$|(Id|_id|ID|Uri|_uri|Handle|_handle)$",
    )
    .expect("compiles")
});

/// Values of a result a later request may send back: id-like keys, UUIDs, a tool's whole
/// one-word text answer.
fn collect_candidates(result: &Value, step: usize, out: &mut Vec<Candidate>) {
    fn walk(v: &Value, path: &str, key: &str, step: usize, out: &mut Vec<Candidate>) {
        match v {
            Value::String(s) => {
                let id_like = ID_KEY.is_match(key) || golden::UUID.is_match(s);
                let word = key == "text" && !s.contains(char::is_whitespace) && s.len() <= 100;
                if s.len() >= 4 && (id_like || word) && !out.iter().any(|c| c.value == *s) {
                    out.push(Candidate {
                        value: s.clone(),
                        step,
                        path: path.to_string(),
                        key: key.to_string(),
                        var: None,
                    });
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().take(50) {
                    walk(item, &format!("{path}[{i}]"), key, step, out);
                }
            }
            Value::Object(map) => {
                for (k, item) in map {
                    if k == "_meta" {
                        continue;
                    }
                    walk(item, &child(path, k), k, step, out);
                }
            }
            _ => {}
        }
    }
    walk(result, "$", "", step, out);
}

/// `$.a.b` or `$['odd key']`.
fn child(path: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", jsonpath_string(key))
    }
}

/// A pattern for a string holding volatile parts (UUIDs, timestamps, loopback ports), or
/// `None` when it holds none.
fn volatile_pattern(s: &str) -> Option<String> {
    static PORT: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"\b(?:127\.0\.0\.1|localhost|\[::1\]):\d{2,5}\b").expect("compiles")
    });
    let mut spans: Vec<(usize, usize, &str)> = Vec::new();
    for (re, pattern) in [
        (&*golden::UUID, "[0-9a-fA-F-]{36}"),
        (
            &*golden::TIMESTAMP,
            r"\d{4}-\d{2}-\d{2}[T ][0-9:.,]+(?:Z|[+-][0-9:]+)?",
        ),
        (&*PORT, r"[^\s/]+:\d+"),
    ] {
        for m in re.find_iter(s) {
            if !spans.iter().any(|(a, b, _)| m.start() < *b && *a < m.end()) {
                spans.push((m.start(), m.end(), pattern));
            }
        }
    }
    if spans.is_empty() {
        return None;
    }
    spans.sort();
    let mut out = String::from("^");
    let mut at = 0;
    for (start, end, pattern) in spans {
        out.push_str(&regex::escape(&s[at..start]));
        out.push_str(pattern);
        at = end;
    }
    out.push_str(&regex::escape(&s[at..]));
    out.push('$');
    Some(out)
}

/// The expectations of a result.
fn expectations(call: &Call, result: &Value, known: &mut Known, mode: ExpectMode, step: &mut Step) {
    if call.method == methods::TOOLS_CALL {
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        step.expect.push(format!("isError: {is_error}"));
    }
    if mode == ExpectMode::Golden {
        let name = slug(&step.name);
        let sanitizers = [
            crate::language::dsl::SanitizerSpec::Timestamps,
            crate::language::dsl::SanitizerSpec::Uuids,
        ];
        let value = golden::canonical(result.clone(), &sanitizers);
        step.expect.push(format!(
            "{{ snapshot: {}, sanitize: [timestamps, uuids] }}",
            scalar(&name)
        ));
        step.golden = Some((name, golden::to_text(&value)));
        return;
    }
    if let Some(kind) = ListKind::from_method(&call.method) {
        let items = result
            .get(kind.result_key())
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let path = format!("$.{}[*].{}", kind.result_key(), kind.item_id());
        let ids: Vec<&str> = items
            .iter()
            .filter_map(|i| i.get(kind.item_id()).and_then(Value::as_str))
            .collect();
        step.expect.push(format!(
            "{{ path: {}, length: {} }}",
            quoted(&format!("$.{}", kind.result_key())),
            items.len()
        ));
        for id in ids.iter().take(MAX_EXPECTATIONS) {
            // An item named by a volatile value (a UUID) is another item on the next run.
            if volatile_pattern(id).is_some() && !known.vars.contains_key(*id) {
                continue;
            }
            step.expect.push(format!(
                "{{ path: {}, contains: {} }}",
                quoted(&path),
                expected_string(id, known.vars)
            ));
        }
        return;
    }
    let mut lines = Vec::new();
    let depth = if mode == ExpectMode::Exact { 8 } else { 3 };
    walk_expect(result, "$", 0, depth, known, &mut lines);
    if lines.len() > MAX_EXPECTATIONS {
        step.comments.push(format!(
            "{} more values of the answer not asserted (use --expect golden for the whole answer)",
            lines.len() - MAX_EXPECTATIONS
        ));
        lines.truncate(MAX_EXPECTATIONS);
    }
    step.expect.extend(lines);
}

fn expected_string(s: &str, known: &BTreeMap<String, String>) -> String {
    match known.get(s) {
        Some(var) => quoted(&format!("{{{{ {var} }}}}")),
        None => scalar(&literal(s)),
    }
}

/// What expected values are written with: the captured values (value → variable) and the
/// parameters the scrubbed secrets became.
struct Known<'a> {
    vars: &'a BTreeMap<String, String>,
    parameters: &'a mut BTreeSet<String>,
    masked: bool,
}

impl Known<'_> {
    /// A string as an expected value: templated where it holds a captured value or a
    /// secret, a pattern where it holds volatile parts, else as written.
    fn string(&mut self, path: &str, s: &str) -> String {
        let p = quoted(path);
        if s.contains(crate::ground::redact::MASK) {
            self.masked = true;
            return format!("{{ path: {p}, type: string }}");
        }
        let mut pieces = Pieces::new(s);
        pieces.parameters(self.parameters);
        for (value, var) in self.vars.iter().rev() {
            if pieces.holds(value) {
                pieces.replace(value, var);
            }
        }
        let rest: String = pieces
            .0
            .iter()
            .filter(|(v, _)| !v)
            .map(|(_, t)| t.as_str())
            .collect();
        if pieces.changed() && volatile_pattern(&rest).is_none() {
            return format!("{{ path: {p}, equals: {} }}", quoted(&pieces.template()));
        }
        if let Some(pattern) = volatile_pattern(s) {
            format!("{{ path: {p}, matches: {} }}", quoted(&pattern))
        } else if s.len() > MAX_EQUALS_TEXT {
            format!("{{ path: {p}, type: string }}")
        } else {
            format!("{{ path: {p}, equals: {} }}", scalar(&literal(s)))
        }
    }
}

fn walk_expect(
    v: &Value,
    path: &str,
    depth: usize,
    max_depth: usize,
    known: &mut Known,
    out: &mut Vec<String>,
) {
    match v {
        Value::String(s) => out.push(known.string(path, s)),
        Value::Number(_) | Value::Bool(_) | Value::Null => {
            out.push(format!("{{ path: {}, equals: {v} }}", quoted(path)));
        }
        Value::Array(items) => {
            out.push(format!(
                "{{ path: {}, length: {} }}",
                quoted(path),
                items.len()
            ));
            if depth < max_depth {
                for (i, item) in items.iter().enumerate().take(10) {
                    walk_expect(
                        item,
                        &format!("{path}[{i}]"),
                        depth + 1,
                        max_depth,
                        known,
                        out,
                    );
                }
            }
        }
        Value::Object(map) => {
            if depth >= max_depth {
                out.push(format!("{{ path: {}, type: object }}", quoted(path)));
                return;
            }
            for (k, item) in map {
                if k == "_meta" || k == "isError" || k == "nextCursor" {
                    continue;
                }
                walk_expect(item, &child(path, k), depth + 1, max_depth, known, out);
            }
        }
    }
}

/// The `client:` block: the capabilities the client declared and its answers, in the order
/// it gave them (the first whose `when` holds answers).
fn client_block(session: &Session, notes: &mut Vec<String>) -> String {
    let caps = &session.capabilities;
    let has = |k: &str| caps.get(k).is_some();
    if !(has("roots") || has("sampling") || has("elicitation")) {
        if !session.asks.is_empty() {
            notes.push(
                "the server asked the client, which declared no capability for it: not scripted"
                    .into(),
            );
        }
        return String::new();
    }
    let mut out = String::from("client:\n  capabilities:\n");
    if let Some(r) = caps.get("roots") {
        let list_changed = r
            .get("listChanged")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        out.push_str(&format!("    roots: {{listChanged: {list_changed}}}\n"));
    }
    if let Some(s) = caps.get("sampling") {
        let mut parts = Vec::new();
        if s.get("tools").is_some() {
            parts.push("tools: true");
        }
        if s.get("context").is_some() {
            parts.push("context: true");
        }
        out.push_str(&format!("    sampling: {{{}}}\n", parts.join(", ")));
    }
    if let Some(e) = caps.get("elicitation") {
        let url = e.get("url").is_some();
        out.push_str(&format!(
            "    elicitation: {{form: true{}}}\n",
            if url { ", url: true" } else { "" }
        ));
    }
    if has("roots") {
        out.push_str("  roots:\n");
        let roots = session
            .asks
            .iter()
            .rev()
            .find(|a| a.method == methods::ROOTS_LIST)
            .and_then(|a| a.answer.as_ref().ok())
            .and_then(|r| r.get("roots"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if roots.is_empty() {
            out.push_str("    []   # the server did not ask for roots while recording\n");
        }
        for root in roots {
            let uri = root.get("uri").and_then(Value::as_str).unwrap_or_default();
            out.push_str(&format!("    - uri: {}\n", scalar(&literal(uri))));
            if let Some(name) = root.get("name").and_then(Value::as_str) {
                out.push_str(&format!("      name: {}\n", scalar(name)));
            }
        }
    }
    if has("sampling") {
        out.push_str("  sampling:\n");
        let answers = answers_of(
            session,
            methods::SAMPLING_CREATE_MESSAGE,
            "$.params.messages",
            sampling_answer,
        );
        if answers.is_empty() {
            out.push_str(
                "    - refuse: true   # the server did not ask for sampling while recording\n",
            );
        }
        out.push_str(&answers);
    }
    if has("elicitation") {
        out.push_str("  elicitation:\n");
        let answers = answers_of(
            session,
            methods::ELICITATION_CREATE,
            "$.params.message",
            elicitation_answer,
        );
        if answers.is_empty() {
            out.push_str("    - action: decline   # the server did not ask while recording\n");
        }
        out.push_str(&answers);
    }
    out
}

/// The recorded answers to `method`, each matched by `when_path` equal to what the server
/// sent when the answers differ.
fn answers_of(
    session: &Session,
    method: &str,
    when_path: &str,
    answer: fn(&Result<Value, Value>) -> Vec<String>,
) -> String {
    let asks: Vec<&Ask> = session.asks.iter().filter(|a| a.method == method).collect();
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for a in &asks {
        let key = crate::ground::json::path::CompiledPath::parse(when_path)
            .ok()
            .and_then(|p| {
                let doc = request_doc(a);
                p.query(&doc).first().cloned()
            })
            .unwrap_or(Value::Null);
        let text = answer(&a.answer);
        let when = crate::face::app::init::yaml::flow(&key);
        if !seen.iter().any(|(w, _)| *w == when) {
            seen.push((when, text));
        }
    }
    let same = seen.windows(2).all(|w| w[0].1 == w[1].1);
    let mut out = String::new();
    for (i, (when, parts)) in seen.iter().enumerate() {
        if same && i > 0 {
            break;
        }
        if same {
            out.push_str(&format!("    - {{ {} }}\n", parts.join(", ")));
        } else {
            out.push_str(&format!(
                "    - when: {{ path: {}, equals: {when} }}\n",
                quoted(when_path)
            ));
            for part in parts {
                out.push_str(&format!("      {part}\n"));
            }
        }
    }
    out
}

/// The server's request as the `when` of an answer sees it: the whole message (a modern
/// input request carries `method` and `params` alone).
fn request_doc(a: &Ask) -> Value {
    a.request.clone()
}

fn sampling_answer(answer: &Result<Value, Value>) -> Vec<String> {
    match answer {
        Err(_) => vec!["refuse: true".into()],
        Ok(r) => {
            let content = r.get("content");
            let blocks: Vec<Value> = match content {
                Some(Value::Array(items)) => items.clone(),
                Some(one) => vec![one.clone()],
                None => Vec::new(),
            };
            let mut parts = Vec::new();
            for b in &blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => parts.push(format!(
                        "text: {}",
                        scalar(&literal(
                            b.get("text").and_then(Value::as_str).unwrap_or_default()
                        ))
                    )),
                    Some("tool_use") => parts.push(format!(
                        "toolUse: {{name: {}, input: {}, id: {}}}",
                        scalar(b.get("name").and_then(Value::as_str).unwrap_or_default()),
                        crate::face::app::init::yaml::flow(b.get("input").unwrap_or(&Value::Null)),
                        scalar(b.get("id").and_then(Value::as_str).unwrap_or("toolu_1"))
                    )),
                    _ => {}
                }
            }
            if let Some(m) = r.get("model").and_then(Value::as_str) {
                parts.push(format!("model: {}", scalar(m)));
            }
            if let Some(s) = r.get("stopReason").and_then(Value::as_str) {
                parts.push(format!("stopReason: {}", scalar(s)));
            }
            parts
        }
    }
}

fn elicitation_answer(answer: &Result<Value, Value>) -> Vec<String> {
    match answer {
        Err(_) => vec!["action: decline".into()],
        Ok(r) => {
            let action = r.get("action").and_then(Value::as_str).unwrap_or("decline");
            match r.get("content") {
                Some(c) if action == "accept" => vec![
                    "action: accept".into(),
                    format!("content: {}", crate::face::app::init::yaml::flow(c)),
                ],
                _ => vec![format!("action: {}", scalar(action))],
            }
        }
    }
}

/// `--split tool`: a scenario per tool called (its steps, after the earlier steps whose
/// values they use), and one for the rest.
fn by_tool(steps: &[Step], name: &str) -> Vec<(String, Vec<usize>)> {
    let mut groups: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let mut rest = BTreeSet::new();
    for (i, s) in steps.iter().enumerate() {
        match &s.tool {
            Some(t) => {
                groups.entry(t.clone()).or_default().insert(i);
            }
            None => {
                rest.insert(i);
            }
        }
    }
    let mut out = Vec::new();
    if !rest.is_empty() {
        out.push((name.to_string(), rest));
    }
    for (tool, members) in groups {
        out.push((format!("{name}-{}", slug(&tool)), members));
    }
    out.into_iter()
        .map(|(id, members)| {
            // The steps whose captures these use, transitively.
            let mut all = members.clone();
            let mut todo: Vec<usize> = members.into_iter().collect();
            while let Some(i) = todo.pop() {
                for &dep in &steps[i].uses {
                    if all.insert(dep) {
                        todo.push(dep);
                    }
                }
            }
            (id, all.into_iter().collect())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::face::app::record::session::Session;
    use crate::run::record::{Entry, From};
    use serde_json::json;

    fn session(msgs: Vec<(From, Value)>) -> Session {
        let entries: Vec<Entry> = msgs
            .into_iter()
            .map(|(from, msg)| Entry::Message { ms: 0, from, msg })
            .collect();
        Session::read(&entries)
    }

    #[test]
    fn ids_become_captures_and_volatile_values_patterns() {
        let s = session(vec![
            (
                From::Client,
                json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}),
            ),
            (From::Server, json!({"jsonrpc":"2.0","id":0,"result":{}})),
            (
                From::Client,
                json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_note","arguments":{"title":"t"}}}),
            ),
            (
                From::Server,
                json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"created"}],"structuredContent":{"id":"0b4e7f4a-8a43-4d47-9a0c-7d6f1c2b9e11","at":"2026-12-07T04:00:00Z"}}}),
            ),
            (
                From::Client,
                json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_note","arguments":{"id":"0b4e7f4a-8a43-4d47-9a0c-7d6f1c2b9e11","key":"<param:api_token>"}}}),
            ),
            (
                From::Server,
                json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"note 0b4e7f4a-8a43-4d47-9a0c-7d6f1c2b9e11"}]}}),
            ),
        ]);
        let r = render(
            &s,
            &Options {
                name: "recorded".into(),
                expect: ExpectMode::Shape,
                split: Split::Session,
            },
        );
        let text = &r.files[0].text;
        assert!(
            text.contains("create_note_id: \"$.structuredContent.id\""),
            "{text}"
        );
        assert!(text.contains("id: \"{{ create_note_id }}\""), "{text}");
        assert!(text.contains("key: \"{{ api_token }}\""), "{text}");
        assert!(text.contains("parameters: [api_token]"), "{text}");
        assert!(text.contains("matches: \"^\\\\d{4}"), "{text}");
        assert!(!text.contains("0b4e7f4a"), "{text}");
        assert_eq!(r.parameters.iter().collect::<Vec<_>>(), ["api_token"]);
    }
}
