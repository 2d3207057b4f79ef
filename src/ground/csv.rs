//! CSV as RFC 4180 writes it (quoted fields, `""` inside quotes, CRLF or LF): a header
//! line, then one map per line, header → text. For data-driven steps (`each: {file: …}`).

/// One row: (column, value) pairs in the header's order.
pub type Row = Vec<(String, String)>;
/// Where a text stops being CSV: its 1-based line and why.
pub type Broken = (usize, String);

/// The rows of a CSV text, each as (column, value) pairs in the header's order; `Err`
/// with the 1-based line of a row whose field count differs from the header's, or of an
/// unclosed quote.
pub fn rows(text: &str) -> Result<Vec<Row>, Broken> {
    let records = records(text.strip_prefix('\u{feff}').unwrap_or(text))?;
    let mut records = records.into_iter();
    let Some((_, header)) = records.next() else {
        return Ok(Vec::new());
    };
    records
        .filter(|(_, fields)| !(fields.len() == 1 && fields[0].is_empty()))
        .map(|(line, fields)| {
            if fields.len() != header.len() {
                return Err((
                    line,
                    format!("{} field(s), the header has {}", fields.len(), header.len()),
                ));
            }
            Ok(header.iter().cloned().zip(fields).collect())
        })
        .collect()
}

/// The records of the text with the line each starts on.
#[allow(clippy::type_complexity, reason = "each record with its line")]
fn records(text: &str) -> Result<Vec<(usize, Vec<String>)>, Broken> {
    let mut out = Vec::new();
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut line = 1;
    let mut start = 1;
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => {
                if c == '\n' {
                    line += 1;
                }
                field.push(c);
            }
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                fields.push(std::mem::take(&mut field));
                out.push((start, std::mem::take(&mut fields)));
                line += 1;
                start = line;
            }
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err((start, "a quoted field is not closed".into()));
    }
    if !field.is_empty() || !fields.is_empty() {
        fields.push(field);
        out.push((start, fields));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_quotes_and_line_ends() {
        let rows = super::rows("city,note\r\nBoston,\"a, b\"\nParis,\"say \"\"hi\"\"\"\n").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][1], ("note".into(), "a, b".into()));
        assert_eq!(rows[1][1].1, "say \"hi\"");
        assert_eq!(super::rows("a,b\n1\n").unwrap_err().0, 2);
    }
}
