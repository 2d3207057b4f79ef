//! Wire validation (`src/wire`): the compact schemas against the official ones, and the
//! `wire_valid` check / `--wire-validate` flag against the real example server.
//!
//! 1. When the official `schema.json` of a revision is present (`../shared/spec/schema/`,
//!    or `MCPSPEC_OFFICIAL_SCHEMAS`), every official example message of 2026-07-28 passes
//!    our validator for its type (no false positives), and every mutation the official
//!    schema rejects (a required field removed, a required field of the wrong type, in the
//!    result and in its first list item) is rejected by ours too, for each result type we
//!    cover. Without the official schemas these tests print a note and pass.
//! 2. Without them, the checks are still proven on the example server: a seeded `wire-*`
//!    defect fails them with the message named, the clean server passes (both eras,
//!    stdio and HTTP). The pack checks (`modern-wire`, `legacy-wire`) are covered by
//!    `tests/conformance.rs`.

mod common;

use std::path::{Path, PathBuf};

use common::{HttpServer, read_json, run, stdio_target};
use mcpspec::protocol::era::EraKind;
use mcpspec::protocol::wire::{check_as, check_response, check_server_message, type_names};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// 1. Against the official schemas (skippable)
// ---------------------------------------------------------------------------

/// The folder holding `<revision>/schema.json`, if present.
fn official_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("MCPSPEC_OFFICIAL_SCHEMAS")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repo_root().join("../shared/spec/schema"));
    dir.join("2026-07-28/schema.json").exists().then_some(dir)
}

fn skip_note(test: &str) {
    eprintln!(
        "note: {test} skipped: the official schema.json files are not available (set MCPSPEC_OFFICIAL_SCHEMAS to a folder holding <revision>/schema.json)"
    );
}

/// An official schema, with one validator per definition.
struct Official {
    doc: Value,
}

impl Official {
    fn load(dir: &Path, revision: &str) -> Official {
        let text = std::fs::read_to_string(dir.join(revision).join("schema.json")).unwrap();
        Official {
            doc: serde_json::from_str(&text).unwrap(),
        }
    }

    fn def(&self, name: &str) -> &Value {
        &self.doc["$defs"][name]
    }

    fn is_valid(&self, name: &str, value: &Value) -> bool {
        let mut schema = json!({ "$ref": format!("#/$defs/{name}") });
        schema["$defs"] = self.doc["$defs"].clone();
        jsonschema::validator_for(&schema)
            .expect("the official schema compiles")
            .is_valid(value)
    }

    /// The definition an array property's items refer to (`tools` → `Tool`).
    fn item_def(&self, type_name: &str, property: &str) -> Option<String> {
        let items = &self.def(type_name)["properties"][property]["items"]["$ref"];
        items
            .as_str()
            .and_then(|r| r.rsplit('/').next())
            .map(str::to_string)
    }
}

/// The method whose response an official `<Type>ResultResponse` example answers.
fn method_of(example_type: &str) -> Option<&'static str> {
    Some(match example_type {
        "DiscoverResultResponse" => "server/discover",
        "ListToolsResultResponse" => "tools/list",
        "CallToolResultResponse" => "tools/call",
        "ListPromptsResultResponse" => "prompts/list",
        "GetPromptResultResponse" => "prompts/get",
        "ListResourcesResultResponse" => "resources/list",
        "ListResourceTemplatesResultResponse" => "resources/templates/list",
        "ReadResourceResultResponse" => "resources/read",
        "CompleteResultResponse" => "completion/complete",
        "SubscriptionsListenResultResponse" => "subscriptions/listen",
        _ => return None,
    })
}

/// Our name for an official definition, when we cover it as a standalone type.
fn our_type(official: &str) -> Option<&str> {
    let name = match official {
        "ImageContent" | "AudioContent" => "MediaContent",
        "Resource" | "ResourceLink" => "ResourceFields",
        "TextResourceContents" | "BlobResourceContents" => "ResourceContents",
        other => other,
    };
    type_names(EraKind::Modern)
        .contains(&name.to_string())
        .then_some(name)
}

/// How our validator judges one official example of `example_type`; `None`: not a
/// server-to-client message we cover (requests, client results).
fn judge_example(example_type: &str, value: &Value) -> Option<Result<(), String>> {
    let show = |r: Result<(), Vec<mcpspec::protocol::wire::Violation>>| {
        r.map_err(|v| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })
    };
    let era = EraKind::Modern;
    if value.get("jsonrpc").is_some() {
        if value.get("method").is_some() {
            // A notification from the server; requests go the other way.
            return value
                .get("id")
                .is_none()
                .then(|| show(check_server_message(era, value)));
        }
        if value.get("error").is_some() {
            return Some(show(check_response(era, None, value)));
        }
        return method_of(example_type).map(|m| show(check_response(era, Some(m), value)));
    }
    if value.get("code").is_some() && value.get("message").is_some() {
        return Some(show(check_as(era, "Error", value, example_type)));
    }
    our_type(example_type).map(|t| show(check_as(era, t, value, example_type)))
}

/// Official examples that the official schema accepts only through a loose union branch
/// while its own definition of the result (and the specification text) rejects them.
const CONTRADICTED: &[(&str, &str)] = &[(
    "ReadResourceResultResponse/read-resource-result-response.json",
    "a `complete` resources/read result without ttlMs/cacheScope: the official \
     `ReadResourceResult` requires both (as does server/utilities/caching, and the pack's MUST \
     `read_cache_hints_present`); the official response type `InputRequiredResult | \
     ReadResourceResult` accepts it only because `InputRequiredResult` requires nothing \
     but `resultType`",
)];

#[test]
fn every_official_2026_example_passes_our_validator() {
    let Some(dir) = official_dir() else {
        return skip_note("every_official_2026_example_passes_our_validator");
    };
    let official = Official::load(&dir, "2026-07-28");
    let examples = dir.join("2026-07-28/examples");
    let mut judged = Vec::new();
    let mut problems = Vec::new();
    let mut types: Vec<PathBuf> = std::fs::read_dir(&examples)
        .expect("examples folder")
        .map(|e| e.unwrap().path())
        .collect();
    types.sort();
    for type_dir in types {
        let example_type = type_dir.file_name().unwrap().to_str().unwrap().to_string();
        for file in std::fs::read_dir(&type_dir).unwrap() {
            let path = file.unwrap().path();
            let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if official.def(&example_type).is_object() {
                assert!(
                    official.is_valid(&example_type, &value),
                    "{}: the official schema rejects its own example",
                    path.display()
                );
            }
            let file_name = path.file_name().unwrap().to_str().unwrap();
            if let Some((_, why)) = CONTRADICTED
                .iter()
                .find(|(f, _)| *f == format!("{example_type}/{file_name}"))
            {
                // Still contradicted: the official definition of the result rejects it too.
                let result = example_type.strip_suffix("Response").unwrap();
                assert!(
                    !official.is_valid(result, &value["result"]),
                    "{example_type}/{file_name} is no longer contradicted: drop it from CONTRADICTED"
                );
                assert!(judge_example(&example_type, &value).unwrap().is_err());
                eprintln!("note: {example_type}/{file_name} rejected on purpose: {why}");
                continue;
            }
            match judge_example(&example_type, &value) {
                None => {}
                Some(Ok(())) => judged.push(example_type.clone()),
                Some(Err(e)) => problems.push(format!("{example_type}/{}: {e}", path.display())),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "false positives:\n{}",
        problems.join("\n")
    );
    // Every server result response, error and notification type with an example is judged.
    for must in [
        "DiscoverResultResponse",
        "ListToolsResultResponse",
        "CallToolResultResponse",
        "CallToolResult",
        "InputRequiredResult",
        "ListPromptsResultResponse",
        "GetPromptResultResponse",
        "ListResourcesResultResponse",
        "ListResourceTemplatesResultResponse",
        "ReadResourceResultResponse",
        "CompleteResultResponse",
        "SubscriptionsListenResultResponse",
        "UnsupportedProtocolVersionError",
        "HeaderMismatchError",
        "ProgressNotification",
        "SubscriptionsAcknowledgedNotification",
    ] {
        assert!(
            judged.iter().any(|j| j == must),
            "no official example of {must} was judged: {judged:?}"
        );
    }
    eprintln!(
        "{} official examples pass the compact 2026-07-28 schema",
        judged.len()
    );
}

/// Mutations of `valid` (an instance of `type_name`): each required field removed, and
/// set to a value of another type; the same inside the first item of each list.
fn mutations(official: &Official, type_name: &str, valid: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mutate_object = |def: &str, at: &str, out: &mut Vec<(String, Value)>| {
        let required = official.def(def)["required"].clone();
        let allof: Vec<String> = official.def(def)["allOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| {
                s["$ref"]
                    .as_str()
                    .map(|r| r.rsplit('/').next().unwrap().into())
            })
            .collect();
        let mut fields: Vec<String> = required
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect();
        for parent in allof {
            fields.extend(
                official.def(&parent)["required"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str().map(str::to_string)),
            );
        }
        for field in fields {
            let mut missing = valid.clone();
            let target = missing.pointer_mut(at).and_then(Value::as_object_mut);
            let Some(target) = target else { continue };
            let Some(old) = target.remove(&field) else {
                continue;
            };
            out.push((format!("{at}/{field} removed"), missing));
            let wrong = if old.is_string() {
                json!(42)
            } else {
                json!("x")
            };
            let mut retyped = valid.clone();
            retyped.pointer_mut(at).unwrap()[&field] = wrong;
            out.push((format!("{at}/{field} of the wrong type"), retyped));
        }
    };
    mutate_object(type_name, "", &mut out);
    for (key, value) in valid.as_object().into_iter().flatten() {
        if value.get(0).is_some_and(Value::is_object)
            && let Some(item) = official.item_def(type_name, key)
        {
            mutate_object(&item, &format!("/{key}/0"), &mut out);
        }
    }
    out
}

/// Checks that ours rejects what the official schema rejects; returns the number of
/// mutations compared.
fn compare_mutations(
    official: &Official,
    era: EraKind,
    type_name: &str,
    valid: &Value,
    problems: &mut Vec<String>,
) -> usize {
    assert!(
        official.is_valid(type_name, valid),
        "{type_name}: the seed instance is not valid for the official schema: {valid}"
    );
    if let Err(v) = check_as(era, type_name, valid, type_name) {
        problems.push(format!("{type_name}: false positive on the seed: {v:?}"));
    }
    let mut compared = 0;
    for (what, mutated) in mutations(official, type_name, valid) {
        if official.is_valid(type_name, &mutated) {
            continue;
        }
        compared += 1;
        if check_as(era, type_name, &mutated, type_name).is_ok() {
            problems.push(format!(
                "{type_name} ({era:?}): the official schema rejects `{what}`, ours accepts it"
            ));
        }
    }
    compared
}

/// The `result` of the first official example of `<type_name>Response` (or `<type_name>`).
fn official_instance(dir: &Path, type_name: &str) -> Value {
    for (folder, pointer) in [
        (format!("{type_name}Response"), "/result"),
        (type_name.to_string(), ""),
    ] {
        let path = dir.join("2026-07-28/examples").join(&folder);
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files {
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let value = value.pointer(pointer).cloned().unwrap_or(Value::Null);
            // Prefer an instance with a non-empty list, so that items are mutated too.
            if value
                .as_object()
                .is_some_and(|o| o.values().any(|v| v.get(0).is_some()))
                || type_name == "DiscoverResult"
                || type_name == "CompleteResult"
                || type_name == "SubscriptionsListenResult"
            {
                return value;
            }
        }
    }
    panic!("no official example of {type_name} with a list item");
}

#[test]
fn official_rejections_of_mutated_2026_results_are_ours_too() {
    let Some(dir) = official_dir() else {
        return skip_note("official_rejections_of_mutated_2026_results_are_ours_too");
    };
    let official = Official::load(&dir, "2026-07-28");
    let mut problems = Vec::new();
    let mut total = 0;
    for type_name in [
        "DiscoverResult",
        "ListToolsResult",
        "CallToolResult",
        "ListPromptsResult",
        "GetPromptResult",
        "ListResourcesResult",
        "ListResourceTemplatesResult",
        "ReadResourceResult",
        "CompleteResult",
        "SubscriptionsListenResult",
    ] {
        let valid = official_instance(&dir, type_name);
        let n = compare_mutations(&official, EraKind::Modern, type_name, &valid, &mut problems);
        assert!(n > 0, "{type_name}: no mutation was compared");
        total += n;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("{total} mutations of 2026-07-28 results rejected by both schemas");
}

/// Valid 2025-11-25 results (there are no official examples for that revision).
fn legacy_instances() -> Vec<(&'static str, Value)> {
    let tool = json!({"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
        "outputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}});
    vec![
        (
            "InitializeResult",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"}, "instructions": "hi"}),
        ),
        (
            "ListToolsResult",
            json!({"tools": [tool], "nextCursor": "c"}),
        ),
        (
            "CallToolResult",
            json!({"content": [{"type": "text", "text": "5"}], "structuredContent": {"sum": 5}, "isError": false}),
        ),
        (
            "ListPromptsResult",
            json!({"prompts": [{"name": "p", "arguments": [{"name": "x", "required": true}]}]}),
        ),
        (
            "GetPromptResult",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "t"}}]}),
        ),
        (
            "ListResourcesResult",
            json!({"resources": [{"uri": "file:///a", "name": "a", "mimeType": "text/plain"}]}),
        ),
        (
            "ListResourceTemplatesResult",
            json!({"resourceTemplates": [{"uriTemplate": "file:///{x}", "name": "t"}]}),
        ),
        (
            "ReadResourceResult",
            json!({"contents": [{"uri": "file:///a", "text": "x"}]}),
        ),
        (
            "CompleteResult",
            json!({"completion": {"values": ["a"], "hasMore": false}}),
        ),
    ]
}

#[test]
fn official_rejections_of_mutated_2025_results_are_ours_too() {
    let Some(dir) = official_dir().filter(|d| d.join("2025-11-25/schema.json").exists()) else {
        return skip_note("official_rejections_of_mutated_2025_results_are_ours_too");
    };
    let official = Official::load(&dir, "2025-11-25");
    let mut problems = Vec::new();
    let mut total = 0;
    for (type_name, valid) in legacy_instances() {
        let n = compare_mutations(&official, EraKind::Legacy, type_name, &valid, &mut problems);
        assert!(n > 0, "{type_name}: no mutation was compared");
        total += n;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("{total} mutations of 2025-11-25 results rejected by both schemas");
}

// ---------------------------------------------------------------------------
// 2. Without the official schemas
// ---------------------------------------------------------------------------

#[test]
fn a_violation_names_the_message_the_pointer_and_what_was_wanted() {
    let message = json!({"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete",
        "ttlMs": 0, "cacheScope": "public", "tools": [{"name": "a", "inputSchema": {"type": "string"}}]}});
    let violations = check_response(EraKind::Modern, Some("tools/list"), &message).unwrap_err();
    let text = violations[0].to_string();
    assert!(
        text.starts_with("tools/list response (id 7) is not a valid ListToolsResult (2026-07-28): at /result/tools/0/inputSchema/type:"),
        "{text}"
    );
    assert!(text.contains("object"), "{text}");
    // The same result is fine in the legacy era apart from the schema root type, and a
    // legacy result needs no resultType nor cache hints.
    let legacy = json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}});
    assert!(check_response(EraKind::Legacy, Some("tools/list"), &legacy).is_ok());
    let errors = check_response(EraKind::Modern, Some("tools/list"), &legacy).unwrap_err();
    let wanted: Vec<String> = errors.iter().map(|v| v.wanted.clone()).collect();
    for field in ["resultType", "ttlMs", "cacheScope"] {
        assert!(
            wanted.iter().any(|w| w.contains(field)),
            "{field}: {wanted:?}"
        );
    }
    // Input-required results of tools/call are judged as InputRequiredResult.
    let mrtr = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}});
    let v = check_response(EraKind::Modern, Some("tools/call"), &mrtr).unwrap_err();
    assert!(v[0].schema_type.starts_with("InputRequiredResult"), "{v:?}");
}

/// `run --wire-validate` on the example scenario `tools.yaml` (which calls tools): the
/// step whose response breaks the schema fails, naming the message.
fn wire_validate_run(flags: &[&str], transport: &str, era: &str) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("r.json");
    let json_arg = json_path.to_str().unwrap();
    let scenario = "examples/scenarios/tools.yaml";
    let server;
    let target: Vec<String> = if transport == "http" {
        server = HttpServer::start(flags);
        vec!["--url".into(), server.url.clone()]
    } else {
        vec!["--stdio".into(), stdio_target(flags)]
    };
    let mut args = vec![
        "run",
        scenario,
        "--wire-validate",
        "--era",
        era,
        "--json",
        json_arg,
    ];
    args.extend(target.iter().map(String::as_str));
    let r = run(&args);
    (r.code, read_json(&json_path), r.all_output())
}

fn failures_of(report: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for suite in report["suites"].as_array().unwrap() {
        for step in suite["steps"].as_array().unwrap() {
            for f in step["outcome"]["failures"].as_array().into_iter().flatten() {
                out.push((
                    step["name"].as_str().unwrap().to_string(),
                    f["message"].as_str().unwrap_or("").to_string(),
                ));
            }
        }
    }
    out
}

#[test]
fn wire_validate_fails_the_step_that_received_a_bad_message_in_both_eras_and_transports() {
    for transport in ["stdio", "http"] {
        for era in ["legacy", "2026-07-28"] {
            let (code, report, out) = wire_validate_run(&[], transport, era);
            assert_eq!(code, 0, "clean server, {transport} {era}:\n{out}");
            assert!(failures_of(&report).is_empty(), "{out}");

            let (code, report, out) =
                wire_validate_run(&["--defect", "wire-wrong-type-content"], transport, era);
            assert_eq!(code, 1, "{transport} {era}:\n{out}");
            let failures = failures_of(&report);
            let wire: Vec<_> = failures
                .iter()
                .filter(|(_, m)| m.contains("is not a valid CallToolResult"))
                .collect();
            assert!(!wire.is_empty(), "{transport} {era}: {failures:?}");
            for (step, message) in wire {
                assert!(
                    message.starts_with("tools/call response (id ")
                        && message.contains("at /result/content:"),
                    "{step}: {message}"
                );
            }
            assert!(
                wire_step_names(&report).contains(&"add returns structured content".to_string()),
                "{report}"
            );
        }
    }
}

fn wire_step_names(report: &Value) -> Vec<String> {
    failures_of(report)
        .into_iter()
        .filter(|(_, m)| m.contains("is not a valid"))
        .map(|(s, _)| s)
        .collect()
}

/// Era-aware: results without `resultType` are fine in the legacy era, a violation in
/// the modern one.
#[test]
fn missing_result_type_is_a_violation_only_in_the_modern_era() {
    let target = stdio_target(&["--defect", "no-result-type"]);
    let r = run(&[
        "run",
        "conformance",
        "--filter",
        "*-wire",
        "--stdio",
        &target,
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("PASS  legacy-wire@legacy"), "{r:?}");
    assert!(r.stdout.contains("FAIL  modern-wire@2026-07-28"), "{r:?}");
    assert!(
        r.stdout.contains("server/discover response (id 1) is not a valid DiscoverResult (2026-07-28): at /result: \"resultType\" is a required property"),
        "{r:?}"
    );
}

// A user scenario's `wire_valid`: tests/cases/wire-valid-judges-everything-so-far/.
