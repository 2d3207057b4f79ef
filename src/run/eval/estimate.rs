//! Token counts of a model API that reports no `usage`: estimated from sizes, about 4 bytes
//! a token (the rule of thumb of English text and JSON under the common BPE tokenizers), and
//! labelled estimated wherever they show. Without it such an API costs $0 and `--max-cost`
//! never acts.

use serde_json::Value;

use super::conversation::Turn;

/// Bytes per estimated token.
pub const BYTES_PER_TOKEN: usize = 4;

/// Fill in a turn whose reply had no `usage`: its input from the request body's size, its
/// output from the reply's text and tool calls.
pub fn fill(turn: &mut Turn, body: &Value) {
    if !turn.estimated {
        return;
    }
    turn.input_tokens = tokens(body.to_string().len());
    let calls: usize = turn
        .calls
        .iter()
        .map(|c| {
            c.name.len()
                + match &c.arguments {
                    Ok(v) => v.to_string().len(),
                    Err((raw, _)) => raw.len(),
                }
        })
        .sum();
    turn.output_tokens = tokens(turn.text.as_deref().map_or(0, str::len) + calls);
}

fn tokens(bytes: usize) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_without_usage_is_counted_from_sizes() {
        let mut turn = Turn {
            text: Some("x".repeat(40)),
            estimated: true,
            ..Default::default()
        };
        fill(&mut turn, &Value::String("y".repeat(398)));
        assert_eq!((turn.input_tokens, turn.output_tokens), (100, 10));
        let mut reported = Turn {
            input_tokens: 7,
            ..Default::default()
        };
        fill(&mut reported, &Value::String("y".repeat(398)));
        assert_eq!(reported.input_tokens, 7);
    }
}
