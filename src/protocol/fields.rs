//! Result fields of the specification and their accessors: the names a result, a tool or
//! a discover reply carries (`nextCursor`, `isError`, `structuredContent`, …), the one way
//! to read each, and the one pagination rule every list walk follows.

use serde_json::Value;

/// The cursor of the next page of a paginated list result.
pub const NEXT_CURSOR: &str = "nextCursor";
/// The request parameter that asks for a page.
pub const CURSOR: &str = "cursor";
/// A tool result that reports a failure of the tool (not of the protocol).
pub const IS_ERROR: &str = "isError";
/// A tool result's structured output.
pub const STRUCTURED_CONTENT: &str = "structuredContent";
/// A tool result's content blocks.
pub const CONTENT: &str = "content";
/// A tool's argument schema.
pub const INPUT_SCHEMA: &str = "inputSchema";
/// A tool's output schema.
pub const OUTPUT_SCHEMA: &str = "outputSchema";
/// The protocol revisions a `server/discover` reply lists.
pub const SUPPORTED_VERSIONS: &str = "supportedVersions";
/// Modern results: `complete` or `input_required`.
pub const RESULT_TYPE: &str = "resultType";
/// The `resultType` of a multi round-trip request that needs the client's input.
pub const INPUT_REQUIRED: &str = "input_required";
/// An `input_required` result's requests to the client, by key.
pub const INPUT_REQUESTS: &str = "inputRequests";
/// A retry's answers to them, under the same keys.
pub const INPUT_RESPONSES: &str = "inputResponses";
/// The opaque state a retry echoes exactly.
pub const REQUEST_STATE: &str = "requestState";

/// Whether a modern result asks for the client's input (`resultType: input_required`).
pub fn is_input_required(result: &Value) -> bool {
    result.get(RESULT_TYPE).and_then(Value::as_str) == Some(INPUT_REQUIRED)
}

/// The cursor of the next page, `None` on the last page (absent or `null`).
pub fn next_cursor(result: &Value) -> Option<&Value> {
    result.get(NEXT_CURSOR).filter(|c| !c.is_null())
}

/// Whether a tool result says the tool failed (`isError: true`; absent is false).
pub fn is_error(result: &Value) -> bool {
    result.get(IS_ERROR).and_then(Value::as_bool) == Some(true)
}

/// A tool result's `structuredContent`, if any.
pub fn structured_content(result: &Value) -> Option<&Value> {
    result.get(STRUCTURED_CONTENT)
}

/// A tool definition's `inputSchema`, if any.
pub fn input_schema(tool: &Value) -> Option<&Value> {
    tool.get(INPUT_SCHEMA)
}

/// A tool definition's `outputSchema`, if any.
pub fn output_schema(tool: &Value) -> Option<&Value> {
    tool.get(OUTPUT_SCHEMA)
}

/// The `supportedVersions` of a discover reply, if it lists them.
pub fn supported_versions(result: &Value) -> Option<&Vec<Value>> {
    result.get(SUPPORTED_VERSIONS).and_then(Value::as_array)
}

/// A tool result's content blocks (none when `content` is absent or not a list).
pub fn content_blocks(result: &Value) -> &[Value] {
    result
        .get(CONTENT)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The text of a tool result: the `text` of each content block of type `text`, in order.
pub fn text_blocks(result: &Value) -> impl Iterator<Item = &str> {
    content_blocks(result)
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
}

/// Walking the pages of a list: the cursor rule and the bound on the number of pages, so
/// a server that hands out cursors forever ends the walk with an error, not a hang.
#[derive(Debug, Default)]
pub struct Pages {
    seen: usize,
}

impl Pages {
    /// Pages one walk follows at most.
    pub const MAX: usize = 10_000;

    pub fn new() -> Self {
        Pages::default()
    }

    /// After a page of `method` whose result is `result`: the cursor to ask for next,
    /// `Ok(None)` when this was the last page, an error past [`Pages::MAX`] pages.
    pub fn after(&mut self, method: &str, result: &Value) -> Result<Option<Value>, String> {
        self.seen += 1;
        let Some(cursor) = next_cursor(result) else {
            return Ok(None);
        };
        if self.seen >= Self::MAX {
            return Err(format!(
                "{method}: pagination did not end after {} pages",
                self.seen
            ));
        }
        Ok(Some(cursor.clone()))
    }

    /// The pages seen so far.
    pub fn count(&self) -> usize {
        self.seen
    }
}

/// A tool declares that it only reads, on this machine: `annotations.readOnlyHint: true`
/// and not `openWorldHint: true` (absent is not open: only an explicit `true`).
pub fn tool_reads_only(tool: &Value) -> bool {
    let hint = |key: &str| {
        tool.get("annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    hint("readOnlyHint") == Some(true) && hint("openWorldHint") != Some(true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_null_cursor_ends_the_walk_and_a_string_one_goes_on() {
        let mut pages = Pages::new();
        assert_eq!(
            pages.after("tools/list", &json!({"nextCursor": "c"})),
            Ok(Some(json!("c")))
        );
        assert_eq!(
            pages.after("tools/list", &json!({"nextCursor": null})),
            Ok(None)
        );
        assert_eq!(pages.after("tools/list", &json!({})), Ok(None));
        assert_eq!(pages.count(), 3);
    }

    #[test]
    fn endless_cursors_end_in_an_error() {
        let mut pages = Pages::new();
        let page = json!({"nextCursor": "again"});
        let mut last = Ok(None);
        for _ in 0..Pages::MAX {
            last = pages.after("tools/list", &page);
            if last.is_err() {
                break;
            }
        }
        assert_eq!(
            last,
            Err("tools/list: pagination did not end after 10000 pages".to_string())
        );
    }

    #[test]
    fn tool_result_accessors_read_the_spec_fields() {
        let r = json!({"isError": true, "structuredContent": {"a": 1},
            "content": [{"type": "image", "data": ""}, {"type": "text", "text": "x"}, {"type": "text", "text": "y"}]});
        assert!(is_error(&r));
        assert!(!is_error(&json!({"isError": "true"})));
        assert_eq!(structured_content(&r), Some(&json!({"a": 1})));
        assert_eq!(text_blocks(&r).collect::<Vec<_>>(), ["x", "y"]);
    }
}
