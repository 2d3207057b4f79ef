//! Size caps of an eval run: a model reply is read up to [`MAX_REPLY_BYTES`] (a 100 MB
//! reply is refused with a clear reason, never read whole), and a tool call's arguments are
//! stored in the results up to [`MAX_STORED_ARGUMENT_BYTES`] (beyond: a truncation mark, so
//! a 10 MB argument does not make a 20 MB results file). Expectations are judged on the
//! whole arguments before they are cut.

use serde_json::{Value, json};

/// Largest model reply body read. A reply of `maxTokens` (at most a few hundred KB of
/// text and tool calls) fits many times over.
pub const MAX_REPLY_BYTES: usize = 4 * 1024 * 1024;
/// Largest tool-call arguments object stored in the results, serialized.
pub const MAX_STORED_ARGUMENT_BYTES: usize = 64 * 1024;
/// The key of the object that stands for arguments cut at [`MAX_STORED_ARGUMENT_BYTES`].
pub const TRUNCATED_KEY: &str = "$truncated";

/// Why a reply body could not be read.
#[derive(Debug)]
pub enum BodyError {
    /// The body passed [`MAX_REPLY_BYTES`]; reading stopped there.
    TooLarge,
    /// The body did not arrive in time.
    Timeout,
    Other(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge => write!(
                f,
                "the model API's reply is larger than {} MiB: stopped reading it (a model reply is far smaller; check `baseUrl`)",
                MAX_REPLY_BYTES / (1024 * 1024)
            ),
            BodyError::Timeout => f.write_str("the model API's reply did not arrive in time"),
            BodyError::Other(why) => write!(f, "cannot read the model API's reply: {why}"),
        }
    }
}

/// The body of `resp` as text, read up to [`MAX_REPLY_BYTES`].
pub async fn read_body(mut resp: reqwest::Response) -> Result<String, BodyError> {
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_REPLY_BYTES as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > MAX_REPLY_BYTES {
                    return Err(BodyError::TooLarge);
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) if e.is_timeout() => return Err(BodyError::Timeout),
            Err(e) => return Err(BodyError::Other(e.without_url().to_string())),
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `arguments` as stored in the results: as they are up to [`MAX_STORED_ARGUMENT_BYTES`]
/// serialized, else `{"$truncated": "…"}` saying how large they were, with their start.
pub fn stored_arguments(arguments: Value) -> Value {
    let text = arguments.to_string();
    if text.len() <= MAX_STORED_ARGUMENT_BYTES {
        return arguments;
    }
    json!({
        TRUNCATED_KEY: format!(
            "arguments of {} bytes, more than the {} stored; they began: {}",
            text.len(),
            MAX_STORED_ARGUMENT_BYTES,
            crate::ground::redact::shorten(&text, 200)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_arguments_are_stored_with_a_mark() {
        let small = json!({"city": "Oslo"});
        assert_eq!(stored_arguments(small.clone()), small);
        let big = json!({"text": "x".repeat(10 * 1024 * 1024)});
        let stored = stored_arguments(big);
        let mark = stored[TRUNCATED_KEY].as_str().expect("a mark");
        assert!(mark.starts_with("arguments of 10485771 bytes"), "{mark}");
        assert!(stored.to_string().len() < 1024, "{stored}");
    }
}
