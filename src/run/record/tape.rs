//! The tape: what a recorded session said, one JSON line per message, scrubbed of secrets,
//! written as it happens and read back to write scenarios.

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ground::redact;

/// How a tape's file name ends (`session.tape.jsonl`, `session-2.tape.jsonl`).
pub const TAPE_SUFFIX: &str = ".tape.jsonl";
/// A line longer than this is kept cut (it is forwarded whole all the same).
pub const MAX_LINE: usize = 16 << 20;
/// How much of a line that is not JSON (or of stderr) the tape keeps.
const MAX_TEXT: usize = 4096;
/// A credential-named variable's value shorter than this is not looked for (a word such
/// as `yes` would replace text everywhere).
pub const MIN_SECRET_LEN: usize = 8;

/// Who sent a message.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum From {
    Client,
    Server,
}

/// How a session ended.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum End {
    /// The client closed its side (stdin at end of file); the server was then stopped.
    ClientClosed,
    /// The server exited by itself, with status 0, before the client was done.
    ServerExited,
    /// The server exited with a failure or was killed by a signal mcpspec did not send.
    ServerCrashed,
    /// mcpspec got SIGINT or SIGTERM.
    Interrupted,
}

/// One line of the tape.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Entry {
    /// A JSON-RPC message (or any JSON) as sent, secrets scrubbed.
    Message { ms: u64, from: From, msg: Value },
    /// A line that is not JSON, forwarded as it was; the tape keeps its start.
    Malformed { ms: u64, from: From, text: String },
    /// What the server wrote to stderr.
    Stderr { ms: u64, text: String },
    /// The last line: how and when the session ended.
    End { ms: u64, end: End, detail: String },
}

/// Turns secrets into placeholders before anything reaches the tape.
#[derive(Default)]
pub struct Scrubber {
    /// (parameter name, value), longest value first.
    known: Vec<(String, String)>,
}

impl Scrubber {
    /// The values of credential-named variables of `env` and of those named in `extra`
    /// (at least [`MIN_SECRET_LEN`] long), each to become the parameter named after its
    /// variable, lowercased.
    pub fn from_env(env: impl IntoIterator<Item = (String, String)>, extra: &[String]) -> Scrubber {
        let mut known: Vec<(String, String)> = env
            .into_iter()
            .filter(|(k, v)| {
                (redact::is_sensitive_name(k) || extra.contains(k)) && v.len() >= MIN_SECRET_LEN
            })
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect();
        known.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        known.dedup_by(|a, b| a.1 == b.1);
        Scrubber { known }
    }

    /// The variable behind a parameter name the tape uses.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.known.iter().map(|(k, _)| k.as_str())
    }

    /// Text with known secrets as `<param:NAME>` and secret shapes as `***`.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (name, value) in &self.known {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), &placeholder(name));
            }
        }
        redact::redact_shapes(&out).into_owned()
    }

    /// Every string of a JSON value (keys too) scrubbed in place.
    pub fn json(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                let scrubbed = self.text(s);
                if scrubbed != *s {
                    *s = scrubbed;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            Value::Object(map) => {
                let fields = std::mem::take(map);
                for (k, mut v) in fields {
                    self.json(&mut v);
                    map.insert(self.text(&k), v);
                }
            }
            _ => {}
        }
    }
}

/// How a known secret stands in the tape: `<param:NAME>` (no `NAME: value` shape, so the
/// shape redaction after it leaves it alone).
pub fn placeholder(name: &str) -> String {
    format!("<param:{name}>")
}

static PLACEHOLDER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"<param:([a-z0-9_]+)>").expect("placeholder pattern compiles")
});

/// The placeholders in a text: (the placeholder, the parameter's name).
pub fn placeholders(text: &str) -> impl Iterator<Item = (&str, &str)> {
    PLACEHOLDER.captures_iter(text).map(|c| {
        let whole = c.get(0).expect("a match").as_str();
        let name = c.get(1).expect("the name group").as_str();
        (whole, name)
    })
}

/// Writes the tape line by line as the session goes (nothing is held in memory).
pub struct TapeWriter {
    out: std::io::BufWriter<std::fs::File>,
    start: Instant,
    scrubber: Scrubber,
    /// Messages written, and lines that were not JSON.
    pub messages: u64,
    pub malformed: u64,
}

impl TapeWriter {
    /// A new tape in `dir`: `session.tape.jsonl`, or `session-N.tape.jsonl` when a session
    /// recorded before (or beside: a client may start several servers) holds that name.
    /// Returns the tape and the session's name (`session`, `session-2`, …).
    pub fn create_in(dir: &Path, scrubber: Scrubber) -> std::io::Result<(TapeWriter, String)> {
        for n in 1.. {
            let name = if n == 1 {
                "session".to_string()
            } else {
                format!("session-{n}")
            };
            let path = dir.join(format!("{name}{TAPE_SUFFIX}"));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => return Ok((TapeWriter::new(file, scrubber), name)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("{}: {e}", path.display()),
                    ));
                }
            }
        }
        unreachable!("some name is free")
    }

    pub fn new(file: std::fs::File, scrubber: Scrubber) -> TapeWriter {
        TapeWriter {
            out: std::io::BufWriter::new(file),
            start: Instant::now(),
            scrubber,
            messages: 0,
            malformed: 0,
        }
    }

    fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn write(&mut self, entry: &Entry) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, entry)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    /// One line a side sent (without its newline; a cut line is `truncated`).
    pub fn line(&mut self, from: From, line: &[u8], truncated: bool) -> std::io::Result<()> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let ms = self.ms();
        let entry = match (!truncated)
            .then(|| serde_json::from_slice::<Value>(line).ok())
            .flatten()
        {
            Some(mut msg) => {
                self.scrubber.json(&mut msg);
                self.messages += 1;
                Entry::Message { ms, from, msg }
            }
            None => {
                self.malformed += 1;
                Entry::Malformed {
                    ms,
                    from,
                    text: self.cut(line),
                }
            }
        };
        self.write(&entry)
    }

    /// What the server wrote to stderr (a chunk, cut).
    pub fn stderr(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        let entry = Entry::Stderr {
            ms: self.ms(),
            text: self.cut(chunk),
        };
        self.write(&entry)
    }

    /// The last line.
    pub fn end(&mut self, end: End, detail: &str) -> std::io::Result<()> {
        let entry = Entry::End {
            ms: self.ms(),
            end,
            detail: self.scrubber.text(detail),
        };
        self.write(&entry)
    }

    fn cut(&self, bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_TEXT)]);
        self.scrubber.text(&text)
    }
}

/// Splits a byte stream into lines without holding more than [`MAX_LINE`] of one.
#[derive(Default)]
pub struct Lines {
    buf: Vec<u8>,
    /// The current line passed [`MAX_LINE`]: the rest of it is skipped.
    cut: bool,
}

impl Lines {
    /// Feed bytes; `line(bytes, truncated)` is called for every line they complete.
    pub fn push(
        &mut self,
        mut bytes: &[u8],
        mut line: impl FnMut(&[u8], bool) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        while let Some(at) = bytes.iter().position(|&b| b == b'\n') {
            if self.cut {
                line(&self.buf, true)?;
            } else if self.buf.is_empty() {
                line(&bytes[..at], false)?;
            } else {
                self.buf.extend_from_slice(&bytes[..at]);
                line(&self.buf, false)?;
            }
            self.buf.clear();
            self.cut = false;
            bytes = &bytes[at + 1..];
        }
        if !self.cut {
            let room = MAX_LINE.saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
            self.cut = bytes.len() > room;
        }
        Ok(())
    }

    /// The last line when the stream ended without a newline.
    pub fn finish(
        &mut self,
        mut line: impl FnMut(&[u8], bool) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            line(&self.buf, self.cut)?;
            self.buf.clear();
        }
        Ok(())
    }
}

/// Read a tape back: its entries in order, or where it is not a tape (`file:line`).
pub fn read_tape(path: &Path) -> Result<Vec<Entry>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut entries = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(&line).map_err(|e| {
            format!(
                "{}:{}:{}: not a line of a mcpspec tape: {e}",
                path.display(),
                n + 1,
                e.column()
            )
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_secrets_become_placeholders_and_shapes_masks() {
        let scrubber = Scrubber::from_env(
            [
                ("API_TOKEN".to_string(), "tok-1234567890".to_string()),
                ("SHORT_TOKEN".to_string(), "abc".to_string()),
                ("HOME".to_string(), "/root/home-folder".to_string()),
            ],
            &[],
        );
        let mut msg = json!({"params": {"arguments": {
            "key": "tok-1234567890",
            "url": "https://x/?q=tok-1234567890",
            "note": "abc",
            "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig",
            "home": "/root/home-folder"
        }}});
        scrubber.json(&mut msg);
        let args = &msg["params"]["arguments"];
        assert_eq!(args["key"], "<param:api_token>");
        assert_eq!(args["url"], "https://x/?q=<param:api_token>");
        assert_eq!(
            scrubber.text("token: tok-1234567890"),
            "token: <param:api_token>"
        );
        assert_eq!(args["note"], "abc", "a short value is not looked for");
        assert_eq!(args["jwt"], "***");
        assert_eq!(args["home"], "/root/home-folder", "not a credential name");
    }

    #[test]
    fn lines_split_across_chunks_and_long_lines_are_cut() {
        let mut lines = Lines::default();
        let mut seen = Vec::new();
        let mut take = |l: &[u8], cut: bool| {
            seen.push((String::from_utf8_lossy(l).into_owned(), cut));
            Ok(())
        };
        lines.push(b"{\"a\":", &mut take).unwrap();
        lines.push(b"1}\n{\"b\":2}\npart", &mut take).unwrap();
        lines.finish(&mut take).unwrap();
        assert_eq!(
            seen,
            vec![
                ("{\"a\":1}".to_string(), false),
                ("{\"b\":2}".to_string(), false),
                ("part".to_string(), false)
            ]
        );
        let mut lines = Lines::default();
        let mut cuts = Vec::new();
        let big = vec![b'x'; MAX_LINE + 10];
        lines
            .push(&big, |l, cut| {
                cuts.push((l.len(), cut));
                Ok(())
            })
            .unwrap();
        lines
            .push(b"tail\n", |l, cut| {
                cuts.push((l.len(), cut));
                Ok(())
            })
            .unwrap();
        assert_eq!(cuts, vec![(MAX_LINE, true)]);
    }

    #[test]
    fn a_tape_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let (mut tape, name) = TapeWriter::create_in(dir.path(), Scrubber::default()).unwrap();
        assert_eq!(name, "session");
        assert_eq!(
            TapeWriter::create_in(dir.path(), Scrubber::default())
                .unwrap()
                .1,
            "session-2"
        );
        let path = dir.path().join(format!("session{TAPE_SUFFIX}"));
        tape.line(
            From::Client,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            false,
        )
        .unwrap();
        tape.line(From::Server, b"not json", false).unwrap();
        tape.end(End::ClientClosed, "done").unwrap();
        let entries = read_tape(&path).unwrap();
        assert_eq!(entries.len(), 3);
        assert!(
            matches!(&entries[0], Entry::Message { from: From::Client, msg, .. } if msg["method"] == "ping")
        );
        assert!(matches!(&entries[1], Entry::Malformed { text, .. } if text == "not json"));
        assert!(matches!(
            &entries[2],
            Entry::End {
                end: End::ClientClosed,
                ..
            }
        ));
    }
}
