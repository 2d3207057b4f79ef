//! Cursor pagination for the `*/list` methods (`--page-size`).

use rmcp::ErrorData as McpError;

const CURSOR_PREFIX: &str = "offset:";

/// One page of a list: the items and the cursor of the next page, if any.
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

/// Returns the page of `items` that `cursor` points at. `page_size == 0` disables
/// pagination. A cursor this server did not issue is `-32602`.
pub fn page<T: Clone>(
    items: &[T],
    page_size: usize,
    cursor: Option<&str>,
) -> Result<Page<T>, McpError> {
    let offset = match cursor {
        None => 0,
        Some(cursor) => decode(cursor, items.len(), page_size)
            .ok_or_else(|| McpError::invalid_params(format!("Invalid cursor: {cursor:?}"), None))?,
    };
    if page_size == 0 {
        return Ok(Page {
            items: items.to_vec(),
            next_cursor: None,
        });
    }
    let end = (offset + page_size).min(items.len());
    Ok(Page {
        items: items[offset..end].to_vec(),
        next_cursor: (end < items.len()).then(|| format!("{CURSOR_PREFIX}{end}")),
    })
}

/// A valid cursor is one this server could have issued: a page boundary inside the list.
fn decode(cursor: &str, len: usize, page_size: usize) -> Option<usize> {
    let offset: usize = cursor.strip_prefix(CURSOR_PREFIX)?.parse().ok()?;
    (page_size > 0 && offset > 0 && offset < len && offset.is_multiple_of(page_size))
        .then_some(offset)
}
