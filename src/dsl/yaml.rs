//! The fast YAML front end: `granit-parser` events → a positioned node tree → serde.
//!
//! serde-saphyr (the reference loader) parses about 3 MB/s, which dominated `mcpspec run`
//! on large scenario files. This module drives the same event parser (`granit-parser`, which
//! serde-saphyr re-exports) directly, builds a small tree with each node's `line:col`, and
//! deserializes the typed model from it, resolving scalars per target type exactly as
//! serde-saphyr does with its default options (YAML 1.1 booleans for untyped values,
//! YAML 1.2 core numbers, `~`/`null`/empty as null). Most scenario files are in the
//! strict subset of YAML that [`scan`] reads by hand into the same tree, skipping the
//! event machinery; the rest go through the events.
//!
//! It covers what scenario files use. Anything else — a syntax error, a type or key
//! error, tags, aliases, merge keys (`<<`), several documents, duplicate keys, radix or
//! underscored numbers, non-finite floats — makes [`from_str`] return [`Unsupported`],
//! and the caller loads the file with serde-saphyr instead: the behaviour and every error
//! message stay serde-saphyr's, only the common case is faster.

use std::borrow::Cow;
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess,
    SeqAccess, VariantAccess, Visitor,
};
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

mod scan;

/// The newtype name through which [`super::value::At`] asks for a node's position: this
/// deserializer answers with a `(line, column, value)` sequence; serde-saphyr treats it
/// as a plain newtype (and `At` then uses serde-saphyr's `Spanned`).
pub const POSITIONED: &str = "__mcpspec_positioned";

/// The fast path does not handle this input; load it with serde-saphyr.
#[derive(Debug)]
pub struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not handled by the fast YAML loader")
    }
}

impl std::error::Error for Unsupported {}

impl de::Error for Unsupported {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Unsupported
    }
}

/// Deserialize one YAML document, or [`Unsupported`] when serde-saphyr must do it.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Unsupported> {
    let root = parse(text)?;
    T::deserialize(&root)
}

#[derive(Debug)]
struct Node<'a> {
    line: u32,
    col: u32,
    kind: Kind<'a>,
}

#[derive(Debug)]
enum Kind<'a> {
    Scalar { text: Cow<'a, str>, plain: bool },
    Seq(Vec<Node<'a>>),
    Map(Vec<(Node<'a>, Node<'a>)>),
}

/// Build the node tree of the single document in `text`: with the hand-written scanner
/// when the text is in its subset (most scenario files), else from `granit-parser` events.
fn parse(text: &str) -> Result<Node<'_>, Unsupported> {
    match scan::scan(text) {
        Some(root) => Ok(root),
        None => parse_events(text),
    }
}

/// Build the node tree from `granit-parser` events.
fn parse_events(text: &str) -> Result<Node<'_>, Unsupported> {
    // Containers being filled; a mapping keeps its pending key.
    enum Open<'a> {
        Seq(Node<'a>),
        Map(Node<'a>, Option<Node<'a>>),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut root: Option<Node> = None;
    let mut documents = 0;
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|_| Unsupported)?;
        let (line, col) = (span.start.line() as u32, span.start.col() as u32 + 1);
        let node = match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => continue,
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return Err(Unsupported);
                }
                continue;
            }
            // Anchors without aliases change nothing; aliases, tags: serde-saphyr.
            Event::Alias(_) | Event::UnresolvedAlias(_) => return Err(Unsupported),
            Event::Anchor(..) => continue,
            Event::Scalar(_, _, _, Some(_))
            | Event::SequenceStart(_, _, Some(_))
            | Event::MappingStart(_, _, Some(_)) => return Err(Unsupported),
            Event::Scalar(text, style, _, None) => Node {
                line,
                col,
                kind: Kind::Scalar {
                    text,
                    plain: style == ScalarStyle::Plain,
                },
            },
            // Deeper documents are serde-saphyr's to refuse (with its depth budget, the
            // same as the scanner's limit): the tree is dropped and read recursively.
            Event::SequenceStart(..) | Event::MappingStart(..)
                if stack.len() >= scan::MAX_DEPTH =>
            {
                return Err(Unsupported);
            }
            Event::SequenceStart(..) => {
                stack.push(Open::Seq(Node {
                    line,
                    col,
                    kind: Kind::Seq(Vec::new()),
                }));
                continue;
            }
            Event::MappingStart(..) => {
                stack.push(Open::Map(
                    Node {
                        line,
                        col,
                        kind: Kind::Map(Vec::new()),
                    },
                    None,
                ));
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Open::Seq(node)) => node,
                _ => return Err(Unsupported),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Open::Map(node, None)) => {
                    check_keys(&node)?;
                    node
                }
                _ => return Err(Unsupported),
            },
            // Comments and whatever presentation events a parser version adds.
            #[allow(unreachable_patterns)]
            _ => continue,
        };
        match stack.last_mut() {
            None if root.is_none() => root = Some(node),
            None => return Err(Unsupported),
            Some(Open::Seq(Node {
                kind: Kind::Seq(items),
                ..
            })) => items.push(node),
            Some(Open::Map(map, pending)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => {
                    if let Kind::Map(entries) = &mut map.kind {
                        entries.push((key, node));
                    }
                }
            },
            Some(Open::Seq(_)) => return Err(Unsupported),
        }
    }
    if !stack.is_empty() {
        return Err(Unsupported);
    }
    root.ok_or(Unsupported)
}

/// Keys must be scalars, not merge keys (`<<`), and unique (serde-saphyr's default
/// policies); keys that may be numbers are left to serde-saphyr, which compares those
/// by value.
fn check_keys(map: &Node) -> Result<(), Unsupported> {
    let Kind::Map(entries) = &map.kind else {
        return Ok(());
    };
    let mut seen: Vec<&str> = Vec::with_capacity(entries.len());
    for (key, _) in entries {
        let Kind::Scalar { text, plain } = &key.kind else {
            return Err(Unsupported);
        };
        if *plain
            && (text == "<<" || text.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c)))
        {
            return Err(Unsupported);
        }
        if seen.contains(&text.as_ref()) {
            return Err(Unsupported);
        }
        seen.push(text);
    }
    Ok(())
}

/// serde-saphyr's `yaml_trim`.
fn trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\r', '\n'])
}

fn is_nullish(text: &str, plain: bool) -> bool {
    plain && matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// YAML 1.1 booleans (serde-saphyr's default, `strict_booleans: false`).
fn yaml11_bool(s: &str) -> Option<bool> {
    let t = trim(s);
    let any = |words: &[&str]| words.iter().any(|w| t.eq_ignore_ascii_case(w));
    if any(&["true", "yes", "y", "on"]) {
        Some(true)
    } else if any(&["false", "no", "n", "off"]) {
        Some(false)
    } else {
        None
    }
}

/// A decimal integer as serde-saphyr reads it: optional sign, no redundant leading zero.
/// Radix prefixes and underscores are [`Unsupported`]; `Ok(None)` means "not an integer".
fn decimal(t: &str) -> Result<Option<(bool, u128)>, Unsupported> {
    let (negative, digits) = match t.strip_prefix('+') {
        Some(rest) => (false, rest),
        None => match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t),
        },
    };
    let lower = digits.get(..2).map(str::to_ascii_lowercase);
    if matches!(lower.as_deref(), Some("0x" | "0o" | "0b")) || digits.contains('_') {
        return Err(Unsupported);
    }
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.starts_with('0') && digits != "0")
    {
        return Ok(None);
    }
    Ok(digits.parse::<u128>().ok().map(|v| (negative, v)))
}

fn signed<T: TryFrom<i128>>(s: &str) -> Result<T, Unsupported> {
    let (negative, magnitude) = decimal(trim(s))?.ok_or(Unsupported)?;
    let magnitude = i128::try_from(magnitude).map_err(|_| Unsupported)?;
    T::try_from(if negative { -magnitude } else { magnitude }).map_err(|_| Unsupported)
}

fn unsigned<T: TryFrom<u128>>(s: &str) -> Result<T, Unsupported> {
    match decimal(trim(s))? {
        Some((false, v)) => T::try_from(v).map_err(|_| Unsupported),
        _ => Err(Unsupported),
    }
}

/// A finite float as serde-saphyr's `parse_yaml12_float`; `.inf`/`.nan` are left to it.
fn float(s: &str) -> Result<f64, Unsupported> {
    let t = trim(s);
    if t.to_ascii_lowercase().contains(".nan") || t.to_ascii_lowercase().contains(".inf") {
        return Err(Unsupported);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(Unsupported),
    }
}

/// What an untyped plain scalar is (serde-saphyr's `deserialize_any`).
enum Resolved {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str,
}

fn resolve_plain(text: &str) -> Result<Resolved, Unsupported> {
    if is_nullish(text, true) {
        return Ok(Resolved::Null);
    }
    if let Some(b) = yaml11_bool(text) {
        return Ok(Resolved::Bool(b));
    }
    let t = trim(text);
    let unsigned_part = t.strip_prefix(['+', '-']).unwrap_or(t);
    if !unsigned_part.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        // Only numeral-shaped text can be a number (`inf`, `nan` stay strings).
        return Ok(Resolved::Str);
    }
    if matches!(unsigned_part.as_bytes(), [b'0', b'X' | b'O' | b'B', ..])
        || matches!(unsigned_part, ".nan" | ".NaN" | ".NAN") && unsigned_part != t
    {
        return Ok(Resolved::Str);
    }
    if let Some((negative, v)) = decimal(t)? {
        return if negative {
            i64::try_from(v)
                .ok()
                .and_then(|v| v.checked_neg())
                .or((v == 1u128 << 63).then_some(i64::MIN))
                .map(Resolved::I64)
                .ok_or(Unsupported)
        } else {
            u64::try_from(v).map(Resolved::U64).map_err(|_| Unsupported)
        };
    }
    let lower = t.to_ascii_lowercase();
    if lower.contains(".inf") || lower.contains(".nan") {
        return Err(Unsupported);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Resolved::F64(v)),
        // Overflowing numerals (`1e999`) are rejected or special-cased by serde-saphyr.
        Ok(_) => Err(Unsupported),
        Err(_) => Ok(Resolved::Str),
    }
}

impl<'a> Node<'a> {
    fn scalar(&self) -> Result<(&str, bool), Unsupported> {
        match &self.kind {
            Kind::Scalar { text, plain } => Ok((text, *plain)),
            _ => Err(Unsupported),
        }
    }

    /// A string target: any scalar but a plain null.
    fn string(&self) -> Result<&str, Unsupported> {
        let (text, plain) = self.scalar()?;
        if is_nullish(text, plain) {
            return Err(Unsupported);
        }
        Ok(text)
    }
}

macro_rules! scalar_number {
    ($($method:ident => $visit:ident via $parse:ident;)*) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
            visitor.$visit($parse(self.scalar()?.0)?)
        })*
    };
}

impl<'de, 'n, 'a> Deserializer<'de> for &'n Node<'a> {
    type Error = Unsupported;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        match &self.kind {
            Kind::Scalar { text, plain: false } => visitor.visit_str(text),
            Kind::Scalar { text, plain: true } => match resolve_plain(text)? {
                Resolved::Null => visitor.visit_unit(),
                Resolved::Bool(b) => visitor.visit_bool(b),
                Resolved::U64(v) => visitor.visit_u64(v),
                Resolved::I64(v) => visitor.visit_i64(v),
                Resolved::F64(v) => visitor.visit_f64(v),
                Resolved::Str => visitor.visit_str(text),
            },
            Kind::Seq(_) => self.deserialize_seq(visitor),
            Kind::Map(_) => self.deserialize_map(visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        visitor.visit_bool(yaml11_bool(self.scalar()?.0).ok_or(Unsupported)?)
    }

    scalar_number! {
        deserialize_i8 => visit_i8 via signed;
        deserialize_i16 => visit_i16 via signed;
        deserialize_i32 => visit_i32 via signed;
        deserialize_i64 => visit_i64 via signed;
        deserialize_u8 => visit_u8 via unsigned;
        deserialize_u16 => visit_u16 via unsigned;
        deserialize_u32 => visit_u32 via unsigned;
        deserialize_u64 => visit_u64 via unsigned;
        deserialize_f64 => visit_f64 via float;
    }

    fn deserialize_f32<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }

    fn deserialize_char<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        visitor.visit_str(self.string()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        visitor.visit_str(self.string()?)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        match &self.kind {
            Kind::Scalar { text, plain } if is_nullish(text, *plain) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        match &self.kind {
            Kind::Scalar { text, plain } if is_nullish(text, *plain) => visitor.visit_unit(),
            _ => Err(Unsupported),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Unsupported> {
        if name == POSITIONED {
            visitor.visit_seq(Positioned {
                node: self,
                next: 0,
            })
        } else {
            visitor.visit_newtype_struct(self)
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        match &self.kind {
            Kind::Seq(items) => {
                let mut access = Items(items.iter());
                let value = visitor.visit_seq(&mut access)?;
                match access.0.len() {
                    0 => Ok(value),
                    _ => Err(Unsupported),
                }
            }
            _ => Err(Unsupported),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        match &self.kind {
            Kind::Map(entries) => {
                let mut access = Entries {
                    entries: entries.iter(),
                    value: None,
                };
                let value = visitor.visit_map(&mut access)?;
                match access.entries.len() {
                    0 => Ok(value),
                    _ => Err(Unsupported),
                }
            }
            _ => Err(Unsupported),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Unsupported> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Unsupported> {
        // Unit variants only (the DSL has no others): the scalar names the variant.
        visitor.visit_enum(UnitVariant(self.string()?))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        visitor.visit_str(self.string()?)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unsupported> {
        visitor.visit_unit()
    }
}

/// A node's `(line, column, value)`, for [`POSITIONED`].
struct Positioned<'n, 'a> {
    node: &'n Node<'a>,
    next: u8,
}

impl<'de> SeqAccess<'de> for Positioned<'_, '_> {
    type Error = Unsupported;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Unsupported> {
        self.next += 1;
        match self.next {
            1 => seed
                .deserialize(self.node.line.into_deserializer())
                .map(Some),
            2 => seed
                .deserialize(self.node.col.into_deserializer())
                .map(Some),
            3 => seed.deserialize(self.node).map(Some),
            _ => Ok(None),
        }
    }
}

struct Items<'n, 'a>(std::slice::Iter<'n, Node<'a>>);

impl<'de> SeqAccess<'de> for Items<'_, '_> {
    type Error = Unsupported;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Unsupported> {
        self.0.next().map(|n| seed.deserialize(n)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries<'n, 'a> {
    entries: std::slice::Iter<'n, (Node<'a>, Node<'a>)>,
    value: Option<&'n Node<'a>>,
}

impl<'de> MapAccess<'de> for Entries<'_, '_> {
    type Error = Unsupported;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Unsupported> {
        match self.entries.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Unsupported> {
        seed.deserialize(self.value.take().ok_or(Unsupported)?)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

struct UnitVariant<'n>(&'n str);

impl<'de> EnumAccess<'de> for UnitVariant<'_> {
    type Error = Unsupported;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), Unsupported> {
        let name: de::value::StrDeserializer<Unsupported> = self.0.into_deserializer();
        Ok((seed.deserialize(name)?, self))
    }
}

impl<'de> VariantAccess<'de> for UnitVariant<'_> {
    type Error = Unsupported;

    fn unit_variant(self) -> Result<(), Unsupported> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, Unsupported> {
        Err(Unsupported)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Unsupported> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// Untyped scalars resolve as serde-saphyr resolves them (or are left to it).
    #[test]
    fn untyped_scalars_match_serde_saphyr() {
        let cases = [
            "a",
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "true",
            "False",
            "yes",
            "No",
            "y",
            "N",
            "on",
            "OFF",
            "0",
            "-0",
            "+5",
            "12",
            "0127",
            "-0127",
            "1.5",
            "-1.5",
            ".5",
            "1e3",
            "1E-3",
            "2026-07-28",
            "1.2.3",
            "-",
            "+",
            ".",
            "inf",
            "nan",
            "Infinity",
            "-foo",
            "12abc",
            "0X1F",
            "+.nan",
            "18446744073709551615",
            "-9223372036854775808",
            "3.",
            "'q'",
            "\"x\"",
            "|\n  block\n",
            ">\n  folded\n  text\n",
            "a\n  b",
            "\"null\"",
            "'~'",
            "\"true\"",
            "'5'",
        ];
        for case in cases {
            let text = format!("v: {case}\n");
            let reference = serde_saphyr::from_str::<Value>(&text);
            if let Ok(fast) = from_str::<Value>(&text) {
                assert_eq!(
                    fast,
                    reference.expect("serde-saphyr accepts what the fast path accepts"),
                    "{case:?}"
                );
            }
        }
        // The common ones are handled by the fast path.
        let fast: Value = from_str("a: 1\nb: -2\nc: 1.5\nd: yes\ne: ~\nf: text\ng: '3'\n").unwrap();
        assert_eq!(
            fast,
            json!({"a": 1, "b": -2, "c": 1.5, "d": true, "e": null, "f": "text", "g": "3"})
        );
    }

    #[test]
    fn unusual_input_is_left_to_serde_saphyr() {
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "base: &b {x: 1}\nm: {<<: *b}\n",
            "a: 1\na: 2\n",
            "a: 1\n---\nb: 2\n",
            "a: [1, 2\n",
            "a: 0x1F\n",
            "a: 1_000\n",
            "a: .inf\n",
            "a: 1e999\n",
        ] {
            assert!(from_str::<Value>(text).is_err(), "{text:?}");
        }
    }
}
