//! Selecting what runs: tag expressions (`smoke and not slow`), `--shard K/N`,
//! `FILE:LINE` arguments and the files `--watch` saw change.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::run::engine::Item;

/// A boolean expression over tags.
#[derive(Debug, Clone, PartialEq)]
pub enum TagExpr {
    Tag(String),
    Not(Box<TagExpr>),
    And(Box<TagExpr>, Box<TagExpr>),
    Or(Box<TagExpr>, Box<TagExpr>),
}

impl TagExpr {
    /// Parse `smoke and not (slow or flaky)`. A plain tag is the simplest expression.
    pub fn parse(text: &str) -> Result<TagExpr, String> {
        let tokens = tokenize(text)?;
        let mut p = Parser {
            tokens,
            pos: 0,
            text,
        };
        let e = p.or()?;
        if let Some((tok, col)) = p.tokens.get(p.pos) {
            return Err(format!("unexpected `{tok}` at column {col} of `{text}`"));
        }
        Ok(e)
    }

    pub fn matches(&self, tags: &[String]) -> bool {
        match self {
            TagExpr::Tag(t) => tags.iter().any(|x| x == t),
            TagExpr::Not(e) => !e.matches(tags),
            TagExpr::And(a, b) => a.matches(tags) && b.matches(tags),
            TagExpr::Or(a, b) => a.matches(tags) || b.matches(tags),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<(String, usize)>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' || c == ')' {
            out.push((c.to_string(), i + 1));
            i += 1;
        } else if c.is_alphanumeric() || "_-.:/@".contains(c) {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || "_-.:/@".contains(chars[i])) {
                i += 1;
            }
            out.push((chars[start..i].iter().collect(), start + 1));
        } else {
            return Err(format!("unexpected `{c}` at column {} of `{text}`", i + 1));
        }
    }
    if out.is_empty() {
        return Err("empty tag expression".into());
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: Vec<(String, usize)>,
    pos: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(|(t, _)| t.as_str())
    }
    fn or(&mut self) -> Result<TagExpr, String> {
        let mut e = self.and()?;
        while self.peek() == Some("or") {
            self.pos += 1;
            e = TagExpr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }
    fn and(&mut self) -> Result<TagExpr, String> {
        let mut e = self.not()?;
        while self.peek() == Some("and") {
            self.pos += 1;
            e = TagExpr::And(Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }
    fn not(&mut self) -> Result<TagExpr, String> {
        if self.peek() == Some("not") {
            self.pos += 1;
            return Ok(TagExpr::Not(Box::new(self.not()?)));
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<TagExpr, String> {
        let Some((tok, col)) = self.tokens.get(self.pos).cloned() else {
            return Err(format!("`{}` ends where a tag was expected", self.text));
        };
        self.pos += 1;
        match tok.as_str() {
            "(" => {
                let e = self.or()?;
                if self.peek() != Some(")") {
                    return Err(format!(
                        "missing `)` for the `(` at column {col} of `{}`",
                        self.text
                    ));
                }
                self.pos += 1;
                Ok(e)
            }
            ")" | "and" | "or" => Err(format!(
                "expected a tag at column {col} of `{}`, found `{tok}`",
                self.text
            )),
            _ => Ok(TagExpr::Tag(tok)),
        }
    }
}

/// `--shard K/N`: this run takes the items whose position modulo N is K-1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| format!("--shard `{text}`: expected K/N, e.g. 1/4"))?;
        let (k, n): (usize, usize) = match (k.trim().parse(), n.trim().parse()) {
            (Ok(k), Ok(n)) => (k, n),
            _ => {
                return Err(format!(
                    "--shard `{text}`: expected K/N with whole numbers, e.g. 1/4"
                ));
            }
        };
        if n == 0 || k == 0 || k > n {
            return Err(format!("--shard `{text}`: K must be between 1 and N"));
        }
        if !crate::language::dsl::limits::SHARDS.contains(&n) {
            return Err(format!(
                "--shard `{text}`: N must be {}",
                crate::language::dsl::limits::describe(&crate::language::dsl::limits::SHARDS)
            ));
        }
        Ok(Shard {
            index: k - 1,
            count: n,
        })
    }

    pub fn takes(&self, ordinal: usize) -> bool {
        ordinal % self.count == self.index
    }
}

/// A path argument, possibly `FILE:LINE`.
pub fn split_file_line(arg: &Path) -> (PathBuf, Option<u32>) {
    if arg.exists() {
        return (arg.to_path_buf(), None);
    }
    let text = arg.to_string_lossy();
    if let Some((file, line)) = text.rsplit_once(':')
        && let Ok(n) = line.parse::<u32>()
        && Path::new(file).is_file()
    {
        return (PathBuf::from(file), Some(n));
    }
    (arg.to_path_buf(), None)
}

/// Keep the items whose scenario comes from one of `files`; none of them (or no files):
/// keep everything.
pub fn retain_changed(items: &mut Vec<Item<'_>>, files: &[PathBuf]) {
    if files.is_empty() {
        return;
    }
    let files: BTreeSet<PathBuf> = files.iter().map(|f| canonical(f)).collect();
    let from_changed =
        |item: &Item| files.contains(&canonical(Path::new(&item.scenario.file.name)));
    if items.iter().any(from_changed) {
        items.retain(from_changed);
    }
}

/// `p` resolved (symlinks, `..`), or as given when it does not exist.
pub fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tag_expressions() {
        let e = TagExpr::parse("smoke and not slow").unwrap();
        assert!(e.matches(&tags(&["smoke"])));
        assert!(!e.matches(&tags(&["smoke", "slow"])));
        let e = TagExpr::parse("a or b and c").unwrap();
        assert!(e.matches(&tags(&["a"])), "and binds tighter");
        assert!(!e.matches(&tags(&["b"])));
        let e = TagExpr::parse("(a or b) and not (c)").unwrap();
        assert!(e.matches(&tags(&["b"])) && !e.matches(&tags(&["b", "c"])));
        assert!(
            TagExpr::parse("a and")
                .unwrap_err()
                .contains("ends where a tag was expected")
        );
        assert!(TagExpr::parse("(a").unwrap_err().contains("missing `)`"));
        assert!(TagExpr::parse("a $ b").unwrap_err().contains("column 3"));
    }

    #[test]
    fn shards_partition() {
        let shards: Vec<Shard> = (1..=3)
            .map(|k| Shard::parse(&format!("{k}/3")).unwrap())
            .collect();
        for ordinal in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.takes(ordinal)).count(), 1);
        }
        assert!(Shard::parse("0/3").is_err());
        assert!(Shard::parse("4/3").is_err());
        assert!(Shard::parse("x").is_err());
    }
}
