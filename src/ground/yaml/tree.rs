//! A YAML document read once into a tree of positioned nodes, from granit-parser's events:
//! anchors and aliases resolved (shared, never copied), merge keys (`<<`) applied,
//! duplicate keys refused, and every reading limit checked on the way. The typed
//! structures of the DSL are built from this tree by [`super::de`]; nothing else parses
//! YAML.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use granit_parser::{Event, Parser, ScalarStyle, Span, Tag};

use super::error::Error;
use super::schema::{CoreTag, KeyIdentity, Scalar, key_identity};
use crate::ground::source::MAX_INPUT_BYTES;

/// Most YAML nodes (scalars, lists, mappings) one file may hold: about what a scenario
/// file of [`MAX_INPUT_BYTES`], the largest input mcpspec reads, holds (a scenario step
/// runs 10–20 bytes a node).
pub const MAX_NODES: usize = MAX_INPUT_BYTES as usize / 8;

/// Most nodes that aliases may add by repeating their anchors: a document of a few
/// kilobytes can otherwise stand for billions of nodes ("billion laughs").
pub const MAX_ALIASED_NODES: usize = 1_000_000;

/// Most bytes of scalar text that aliases may add by repeating their anchors: the tree
/// shares an anchor, but each typed value built from it holds a copy (100 aliases of a
/// 10 MiB string took 2 GB). As much as the largest file mcpspec reads.
pub const MAX_ALIASED_BYTES: usize = MAX_INPUT_BYTES as usize;

/// Deepest nesting of lists and mappings: deeper documents are no scenario, and every
/// later walk over the tree recurses.
pub const MAX_DEPTH: usize = 64;

/// One node of the document, with where it starts (line 1-based, column 1-based, in
/// characters).
#[derive(Debug, Clone)]
pub struct Node<'a> {
    pub line: u32,
    pub col: u32,
    pub kind: Kind<'a>,
}

#[derive(Debug, Clone)]
pub enum Kind<'a> {
    Scalar(Scalar<'a>),
    Seq(Vec<Node<'a>>),
    Map(Vec<(Node<'a>, Node<'a>)>),
    /// An anchored node, shared by its own place and each alias to it (an alias's
    /// position is the anchor's, as the value it stands for is written there).
    Shared(Rc<Node<'a>>),
}

impl<'a> Node<'a> {
    /// The node itself, through an anchor's sharing.
    pub fn resolved(&self) -> &Node<'a> {
        match &self.kind {
            Kind::Shared(target) => target.resolved(),
            _ => self,
        }
    }

    /// A plain scalar that the core schema reads as null (or a `!!null`).
    pub fn is_null(&self) -> bool {
        match &self.resolved().kind {
            Kind::Scalar(s) => s.is_null(),
            _ => false,
        }
    }
}

/// Read `text` into its document's tree. An empty stream (only comments) is a null node.
pub fn read(text: &str) -> Result<Node<'_>, Error> {
    Reader::new(text).document()
}

/// The parser's words for a tab indenting the next line of a plain scalar, an error it
/// places where the scalar starts.
const TAB_IN_PLAIN_SCALAR: &str = "while scanning a plain scalar, found a tab";

/// Where the first tab in the indentation of a line with content after `line` is: the
/// place of a [`TAB_IN_PLAIN_SCALAR`] error (the scalar may be a few lines above).
fn tab_indenting_after(text: &str, line: u32) -> Option<(u32, u32)> {
    crate::ground::source::lines(text)
        .enumerate()
        .skip(line as usize)
        .find_map(|(i, l)| {
            let body = l.trim_start_matches([' ', '\t']);
            let indent = &l[..l.len() - body.len()];
            let tab = indent.find('\t')?;
            (!body.is_empty() && !body.starts_with('#')).then_some((i as u32 + 1, tab as u32 + 1))
        })
}

/// A collection being read.
enum Open<'a> {
    Seq {
        at: (u32, u32),
        anchor: usize,
        items: Vec<Node<'a>>,
    },
    Map {
        at: (u32, u32),
        anchor: usize,
        entries: Vec<(Node<'a>, Node<'a>)>,
        /// The key read, waiting for its value.
        key: Option<Node<'a>>,
        /// The scalar keys so far, once the mapping is too large for a scan.
        seen: HashSet<KeyIdentity<'a>>,
    },
}

struct Reader<'a> {
    text: &'a str,
    parser: Parser<'a, granit_parser::StrInput<'a>>,
    /// Anchored nodes by the parser's anchor id (0 is no anchor), each with what it
    /// stands for, measured once when it is complete.
    anchors: Vec<Option<(Rc<Node<'a>>, Extent)>>,
    /// What each anchored node stands for, by its address: measuring a node that holds
    /// an anchored one (or an alias) takes the measure of that one, not a second walk.
    extents: HashMap<*const Node<'a>, Extent>,
    nodes: usize,
    /// What the aliases read so far stand for, together.
    aliased: Extent,
    stack: Vec<Open<'a>>,
}

/// What a node stands for, aliases counted as what they repeat: its nodes, and the bytes
/// of its scalars' text. Both saturate past the bounds, which are all that matter.
#[derive(Debug, Clone, Copy, Default)]
struct Extent {
    nodes: usize,
    bytes: usize,
}

impl std::ops::Add for Extent {
    type Output = Extent;
    fn add(self, other: Extent) -> Extent {
        Extent {
            nodes: self.nodes.saturating_add(other.nodes),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }
}

fn position(span: &Span) -> (u32, u32) {
    (span.start.line() as u32, span.start.col() as u32 + 1)
}

fn core_tag(tag: Option<&Tag>) -> CoreTag {
    let Some(tag) = tag else {
        return CoreTag::None;
    };
    if tag.handle() == "!" && tag.suffix().is_empty() || tag.suffix() == "!" {
        return CoreTag::Str;
    }
    match tag.core_suffix() {
        Some("str" | "binary" | "timestamp") => CoreTag::Str,
        Some("null") => CoreTag::Null,
        Some("bool") => CoreTag::Bool,
        Some("int") => CoreTag::Int,
        Some("float") => CoreTag::Float,
        _ => CoreTag::None,
    }
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        let mut options = granit_parser::Options::default();
        options.block_nesting_limit = options.block_nesting_limit.max(MAX_DEPTH + 1);
        options.set_emit_comments(false);
        Reader {
            text,
            parser: Parser::new_from_str_with_options(text, options),
            anchors: Vec::new(),
            extents: HashMap::new(),
            nodes: 0,
            aliased: Extent::default(),
            stack: Vec::new(),
        }
    }

    fn next(&mut self) -> Result<Option<(Event<'a>, Span)>, Error> {
        match self.parser.next_event() {
            None => Ok(None),
            Some(Ok(event)) => Ok(Some(event)),
            Some(Err(e)) => {
                let mark = e.marker();
                let mut at = (mark.line() as u32, mark.col() as u32 + 1);
                if e.info() == TAB_IN_PLAIN_SCALAR {
                    at = tab_indenting_after(self.text, at.0).unwrap_or(at);
                }
                Err(Error::at(e.info(), at.0, at.1))
            }
        }
    }

    fn document(mut self) -> Result<Node<'a>, Error> {
        let mut root: Option<Node<'a>> = None;
        while let Some((event, span)) = self.next()? {
            let (line, col) = position(&span);
            let node = match event {
                Event::StreamStart | Event::DocumentEnd | Event::StreamEnd => continue,
                Event::DocumentStart(..) => {
                    if root.is_some() {
                        return Err(Error::at(
                            "a second YAML document (after `---`): mcpspec reads one document a file",
                            line,
                            col,
                        ));
                    }
                    continue;
                }
                Event::Anchor(..) => continue,
                Event::Alias(id) => {
                    let Some(Some((target, repeated))) = self.anchors.get(id) else {
                        return Err(Error::at(
                            "an alias refers to its own anchor (a recursive alias)",
                            line,
                            col,
                        ));
                    };
                    let target = target.clone();
                    self.aliased = self.aliased + *repeated;
                    if self.aliased.nodes > MAX_ALIASED_NODES {
                        return Err(Error::at(
                            format!(
                                "the aliases of the file stand for more than {MAX_ALIASED_NODES} YAML values"
                            ),
                            line,
                            col,
                        ));
                    }
                    if self.aliased.bytes > MAX_ALIASED_BYTES {
                        return Err(Error::at(
                            format!(
                                "the aliases of the file stand for more than {} MiB of text",
                                MAX_ALIASED_BYTES >> 20
                            ),
                            line,
                            col,
                        ));
                    }
                    let (line, col) = (target.line, target.col);
                    Node {
                        line,
                        col,
                        kind: Kind::Shared(target),
                    }
                }
                Event::UnresolvedAlias(name) => {
                    return Err(Error::at(format!("unknown anchor `{name}`"), line, col));
                }
                Event::Scalar(text, style, anchor, tag) => {
                    self.count(line, col)?;
                    let node = Node {
                        line,
                        col,
                        kind: Kind::Scalar(Scalar {
                            text,
                            plain: style == ScalarStyle::Plain,
                            tag: core_tag(tag.as_deref()),
                        }),
                    };
                    self.anchored(anchor, node)
                }
                Event::SequenceStart(_, anchor, _) => {
                    self.open(line, col)?;
                    self.stack.push(Open::Seq {
                        at: (line, col),
                        anchor,
                        items: Vec::new(),
                    });
                    continue;
                }
                Event::MappingStart(_, anchor, _) => {
                    self.open(line, col)?;
                    self.stack.push(Open::Map {
                        at: (line, col),
                        anchor,
                        entries: Vec::new(),
                        key: None,
                        seen: HashSet::new(),
                    });
                    continue;
                }
                Event::SequenceEnd => match self.stack.pop() {
                    Some(Open::Seq { at, anchor, items }) => {
                        let node = Node {
                            line: at.0,
                            col: at.1,
                            kind: Kind::Seq(items),
                        };
                        self.anchored(anchor, node)
                    }
                    _ => return Err(Error::at("unbalanced YAML events", line, col)),
                },
                Event::MappingEnd => match self.stack.pop() {
                    Some(Open::Map {
                        at,
                        anchor,
                        entries,
                        ..
                    }) => {
                        let node = Node {
                            line: at.0,
                            col: at.1,
                            kind: Kind::Map(merged(entries)?),
                        };
                        self.anchored(anchor, node)
                    }
                    _ => return Err(Error::at("unbalanced YAML events", line, col)),
                },
                #[allow(unreachable_patterns)]
                _ => continue,
            };
            match self.stack.last_mut() {
                None => root = Some(node),
                Some(Open::Seq { items, .. }) => items.push(node),
                Some(Open::Map {
                    entries, key, seen, ..
                }) => match key.take() {
                    None => *key = Some(node),
                    Some(k) => {
                        if let Kind::Scalar(name) = &k.resolved().kind
                            && name.text != "<<"
                            && already(entries, seen, name)
                        {
                            return Err(Error::duplicate_key(&name.text, k.line, k.col));
                        }
                        entries.push((k, node));
                    }
                },
            }
        }
        Ok(root.unwrap_or(Node {
            line: 1,
            col: 1,
            kind: Kind::Scalar(Scalar {
                text: Cow::Borrowed(""),
                plain: true,
                tag: CoreTag::None,
            }),
        }))
    }

    fn count(&mut self, line: u32, col: u32) -> Result<(), Error> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(Error::at(
                format!("the file holds more than {MAX_NODES} YAML values"),
                line,
                col,
            ));
        }
        Ok(())
    }

    fn open(&mut self, line: u32, col: u32) -> Result<(), Error> {
        self.count(line, col)?;
        if self.stack.len() >= MAX_DEPTH {
            return Err(Error::at("the document nests too deeply", line, col));
        }
        Ok(())
    }

    /// `node`, shared under its anchor when it has one.
    fn anchored(&mut self, anchor: usize, node: Node<'a>) -> Node<'a> {
        if anchor == 0 {
            return node;
        }
        let (line, col) = (node.line, node.col);
        let extent = self.extent(&node);
        let shared = Rc::new(node);
        self.extents.insert(Rc::as_ptr(&shared), extent);
        if self.anchors.len() <= anchor {
            self.anchors.resize(anchor + 1, None);
        }
        self.anchors[anchor] = Some((shared.clone(), extent));
        Node {
            line,
            col,
            kind: Kind::Shared(shared),
        }
    }

    /// What `node` stands for. Only a node about to be anchored is measured, once; the
    /// anchored nodes inside it were measured before, so the walk covers each node of
    /// the file at most once per anchor around it.
    fn extent(&self, node: &Node<'a>) -> Extent {
        match &node.kind {
            Kind::Scalar(s) => Extent {
                nodes: 1,
                bytes: s.text.len(),
            },
            Kind::Seq(items) => items
                .iter()
                .fold(Extent { nodes: 1, bytes: 0 }, |sum, item| {
                    sum + self.extent(item)
                }),
            Kind::Map(entries) => entries
                .iter()
                .fold(Extent { nodes: 1, bytes: 0 }, |sum, (k, v)| {
                    sum + self.extent(k) + self.extent(v)
                }),
            Kind::Shared(target) => self.extents[&Rc::as_ptr(target)],
        }
    }
}

/// Whether a mapping being read already has the scalar key `name` (which it then
/// has), judged on what the keys are (`~` is `null`, `01` is `1`): a scan while it is
/// small, a set once it is large (a hostile file of a million keys must not cost a
/// million scans).
fn already<'a>(
    entries: &[(Node<'a>, Node<'a>)],
    seen: &mut HashSet<KeyIdentity<'a>>,
    name: &Scalar<'a>,
) -> bool {
    const SCAN: usize = 32;
    let name = key_identity(name);
    if entries.len() < SCAN {
        return entries
            .iter()
            .any(|(k, _)| scalar_key(k).is_some_and(|k| k == name));
    }
    if seen.is_empty() {
        seen.extend(entries.iter().filter_map(|(k, _)| scalar_key(k)));
    }
    !seen.insert(name)
}

/// A scalar key as what it is.
fn scalar_key<'a>(k: &Node<'a>) -> Option<KeyIdentity<'a>> {
    match &k.resolved().kind {
        Kind::Scalar(s) => Some(key_identity(s)),
        _ => None,
    }
}

/// A mapping's entries with its merge keys (`<<: *base`, `<<: [*a, *b]`) applied: the
/// merged mappings' entries come after the mapping's own, and a key the mapping (or an
/// earlier merged mapping) already has is not taken again — looked up in a set, as a
/// merged mapping may hold hundreds of thousands of keys.
fn merged<'a>(entries: Vec<(Node<'a>, Node<'a>)>) -> Result<Vec<(Node<'a>, Node<'a>)>, Error> {
    let is_merge =
        |k: &Node| matches!(&k.resolved().kind, Kind::Scalar(s) if s.plain && s.text == "<<");
    if !entries.iter().any(|(k, _)| is_merge(k)) {
        return Ok(entries);
    }
    let (merges, mut own): (Vec<_>, Vec<_>) = entries.into_iter().partition(|(k, _)| is_merge(k));
    let mut taken: HashSet<KeyIdentity> = own.iter().filter_map(|(k, _)| scalar_key(k)).collect();
    for (_, value) in merges {
        let sources: Vec<Node<'a>> = match &value.resolved().kind {
            Kind::Seq(items) => items.clone(),
            _ => vec![value.clone()],
        };
        for source in sources {
            let Kind::Map(more) = &source.resolved().kind else {
                return Err(Error::at(
                    "a merge key (`<<`) takes a mapping or a list of mappings",
                    source.line,
                    source.col,
                ));
            };
            for (k, v) in more {
                let present = scalar_key(k).is_some_and(|name| !taken.insert(name));
                if !present {
                    own.push((k.clone(), v.clone()));
                }
            }
        }
    }
    Ok(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> Error {
        read(text).expect_err("refused")
    }

    /// Ten anchors each repeating the one before ten times stand for 10^10 nodes: refused
    /// at the alias that crosses the bound, in the time of reading a few lines.
    #[test]
    fn alias_bombs_are_refused_where_they_cross_the_bound() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut previous = 'a';
        for name in 'b'..='k' {
            let items = vec![format!("*{previous}"); 10].join(", ");
            text.push_str(&format!("{name}: &{name} [{items}]\n"));
            previous = name;
        }
        let e = error(&text);
        assert!(
            e.message
                .contains("aliases of the file stand for more than"),
            "{e}"
        );
        assert_eq!(e.line, 6, "{e}");
    }

    /// A string of 1 MiB repeated by aliases: the bound is on the text they stand for
    /// too, not only on their count of nodes (issue #40: 100 aliases of 10 MiB, 2 GB).
    #[test]
    fn aliases_are_bounded_by_the_text_they_stand_for() {
        let mut text = format!("a: &a {}\nb:\n", "x".repeat(1 << 20));
        text.push_str(&"  - *a\n".repeat(100));
        let e = error(&text);
        assert_eq!(
            e.message,
            "the aliases of the file stand for more than 64 MiB of text"
        );
        // The 65th alias crosses the bound, on line 2 + 65.
        assert_eq!((e.line, e.col), (67, 5), "{e}");
    }

    #[test]
    fn a_recursive_alias_is_refused() {
        let e = error("a: &a [1, *a]\n");
        assert!(e.message.contains("recursive alias"), "{e}");
        assert_eq!((e.line, e.col), (1, 11), "{e}");
    }

    /// A tab indenting the next line of a plain scalar is refused where the tab is, not
    /// where the scalar starts (issue #40: 24 of 65 fuzzed tab cases pointed above it).
    #[test]
    fn a_tab_after_a_plain_scalar_is_refused_where_it_is() {
        for (text, at) in [
            ("a: b\n\tc: d\n", (2, 1)),
            ("a:\n  b: c\n \td: e\n", (3, 2)),
            ("a: b\n\n\t- c\n", (3, 1)),
            ("a: b\r\tc: d\r", (2, 1)),
        ] {
            let e = error(text);
            assert_eq!(e.message, TAB_IN_PLAIN_SCALAR, "{text:?}");
            assert_eq!((e.line, e.col), at, "{text:?}: {e}");
        }
    }

    /// Lines ended by a CR alone are lines to the parser: positions count them.
    #[test]
    fn positions_count_lines_ended_by_a_cr_alone() {
        let e = error("a: 1\rb: 2\ra: 3\r");
        assert_eq!((e.line, e.col), (3, 1), "{e}");
    }

    #[test]
    fn an_unknown_anchor_is_refused() {
        assert!(read("a: *nowhere\n").is_err());
    }

    #[test]
    fn a_second_document_is_refused_where_it_starts() {
        let e = error("a: 1\n---\nb: 2\n");
        assert!(e.message.contains("second YAML document"), "{e}");
        assert_eq!(e.line, 2, "{e}");
    }

    #[test]
    fn duplicate_keys_are_refused_in_small_and_large_mappings() {
        let e = error("a: 1\nb: 2\na: 3\n");
        assert_eq!(
            (e.message.as_str(), e.line),
            ("duplicate mapping key: a", 3)
        );
        let mut large: String = (0..100).map(|i| format!("k{i}: {i}\n")).collect();
        large.push_str("k42: again\n");
        let e = error(&large);
        assert_eq!(
            (e.message.as_str(), e.line),
            ("duplicate mapping key: k42", 101)
        );
    }

    #[test]
    fn nesting_past_the_limit_is_refused() {
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(error(&deep).message, "the document nests too deeply");
        let fits = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(read(&fits).is_ok());
    }

    /// Merge keys: the mapping's own keys win, then earlier merged mappings.
    #[test]
    fn merge_keys_take_what_the_mapping_lacks() {
        let node = read("base: &b {x: 1, y: 2}\nm:\n  <<: [*b, {z: 3, x: 9}]\n  y: 5\n").unwrap();
        let Kind::Map(top) = &node.kind else { panic!() };
        let Kind::Map(m) = &top[1].1.resolved().kind else {
            panic!()
        };
        let pairs: Vec<(String, String)> = m
            .iter()
            .map(|(k, v)| match (&k.resolved().kind, &v.resolved().kind) {
                (Kind::Scalar(k), Kind::Scalar(v)) => (k.text.to_string(), v.text.to_string()),
                _ => panic!(),
            })
            .collect();
        let want = [("y", "5"), ("x", "1"), ("z", "3")];
        assert_eq!(pairs, want.map(|(k, v)| (k.to_string(), v.to_string())));
        let e = error("m:\n  <<: 1\n");
        assert!(e.message.contains("merge key"), "{e}");
    }

    /// A merge key over a mapping of 200,000 keys is read in linear time: each merged key
    /// is looked up among the mapping's own, not scanned for (59 s before, issue #40).
    #[test]
    fn a_merge_over_a_large_mapping_is_read_in_linear_time() {
        const KEYS: usize = 200_000;
        let mut text = String::from("base: &b\n");
        for i in 0..KEYS {
            text.push_str(&format!("  k{i}: {i}\n"));
        }
        text.push_str("m:\n  k7: own\n  <<: *b\n");
        let started = crate::ground::platform::thread_cpu();
        let node = read(&text).unwrap();
        let took = crate::ground::platform::thread_cpu() - started;
        let Kind::Map(top) = &node.kind else { panic!() };
        let Kind::Map(m) = &top[1].1.resolved().kind else {
            panic!()
        };
        assert_eq!(m.len(), KEYS);
        let Kind::Scalar(own) = &m[0].1.kind else {
            panic!()
        };
        assert_eq!(own.text, "own");
        assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
    }

    #[test]
    fn an_empty_stream_is_null() {
        assert!(read("# nothing\n").unwrap().is_null());
    }
}
