//! What a plain scalar is by the YAML 1.2 core schema — the one reading of a scenario
//! (its JSON Schema says YAML 1.2) — and where a YAML 1.1 reader would read it
//! otherwise, for `validate` to warn. Used by [`super::de`] for values and by
//! [`super::tree`] to tell duplicate keys by what they are, not how they are written.

use std::borrow::Cow;

/// A scalar as written — its text, whether it was plain, its tag: all the core schema
/// reads it by (the tree's scalar nodes hold one).
#[derive(Debug, Clone)]
pub struct Scalar<'a> {
    pub text: Cow<'a, str>,
    /// Plain: resolved by the core schema (null, booleans, numbers); quoted or block:
    /// always a string.
    pub plain: bool,
    pub tag: CoreTag,
}

/// The explicit tag of a node, as far as reading it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreTag {
    /// No tag, or one mcpspec gives no meaning to.
    None,
    /// `!!str` (and the non-specific `!`): a string, whatever it looks like.
    Str,
    Null,
    Bool,
    Int,
    Float,
}

impl Scalar<'_> {
    pub fn is_null(&self) -> bool {
        match self.tag {
            CoreTag::Null => true,
            CoreTag::None if self.plain => {
                matches!(&*self.text, "" | "~" | "null" | "Null" | "NULL")
            }
            _ => false,
        }
    }
}

/// A number as the core schema reads a plain scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    Uint(u64),
    Float(f64),
    /// An integer past 64 bits: no JSON number mcpspec holds keeps it exactly, so it is
    /// refused where it is (quoted, it is text).
    TooLarge,
}

/// What a scalar is by the core schema (its tag first, then for a plain one its form).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resolved<'s> {
    Null,
    Bool(bool),
    Number(Number),
    Str(&'s str),
}

pub fn resolve<'s>(s: &'s Scalar) -> Resolved<'s> {
    let text = s.text.as_ref();
    match s.tag {
        CoreTag::Str => return Resolved::Str(text),
        CoreTag::Null => return Resolved::Null,
        CoreTag::None if !s.plain => return Resolved::Str(text),
        // A plain scalar, or one tagged `!!bool`, `!!int` or `!!float`: by its form.
        _ => {}
    }
    if s.is_null() {
        return Resolved::Null;
    }
    if let Some(b) = boolean(text) {
        return Resolved::Bool(b);
    }
    if let Some(n) = integer(text) {
        return Resolved::Number(n);
    }
    if let Some(f) = float(text) {
        return Resolved::Number(Number::Float(f));
    }
    Resolved::Str(text)
}

/// A mapping key as what it is: `~` and `null` are one key, as are `1`, `01` and `0x1`;
/// `"1"` (text) is another.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyIdentity<'a> {
    Null,
    Bool(bool),
    Int(i128),
    /// A float by its bits.
    Float(u64),
    /// Text, and an integer past 64 bits by its digits.
    Text(Cow<'a, str>),
}

pub fn key_identity<'a>(s: &Scalar<'a>) -> KeyIdentity<'a> {
    match resolve(s) {
        Resolved::Str(_) | Resolved::Number(Number::TooLarge) => KeyIdentity::Text(s.text.clone()),
        Resolved::Null => KeyIdentity::Null,
        Resolved::Bool(b) => KeyIdentity::Bool(b),
        Resolved::Number(Number::Int(i)) => KeyIdentity::Int(i.into()),
        Resolved::Number(Number::Uint(u)) => KeyIdentity::Int(u.into()),
        Resolved::Number(Number::Float(f)) => KeyIdentity::Float(f.to_bits()),
    }
}

/// A boolean of the core schema: `true`, `True`, `TRUE`, `false`, `False`, `FALSE`.
pub fn boolean(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// An integer of the core schema: `[-+]?[0-9]+` (decimal, leading zeros too: `0127` is
/// 127), `0o[0-7]+`, `0x[0-9a-fA-F]+`.
fn integer(text: &str) -> Option<Number> {
    let (radix, negative, digits) = if let Some(d) = text.strip_prefix("0x") {
        (16, false, d)
    } else if let Some(d) = text.strip_prefix("0o") {
        (8, false, d)
    } else {
        match text.as_bytes().first()? {
            b'-' => (10, true, &text[1..]),
            b'+' => (10, false, &text[1..]),
            _ => (10, false, text),
        }
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = match u128::from_str_radix(digits, radix) {
        Ok(m) => m,
        Err(_) => return Some(Number::TooLarge),
    };
    Some(if negative {
        match i128::try_from(magnitude)
            .ok()
            .and_then(|m| i64::try_from(-m).ok())
        {
            Some(i) => Number::Int(i),
            None => Number::TooLarge,
        }
    } else {
        match u64::try_from(magnitude) {
            Ok(u) => Number::Uint(u),
            Err(_) => Number::TooLarge,
        }
    })
}

/// A float of the core schema: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`,
/// `[-+]?\.(inf|Inf|INF)`, `\.nan|\.NaN|\.NAN`.
fn float(text: &str) -> Option<f64> {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    match unsigned {
        ".inf" | ".Inf" | ".INF" => {
            return Some(if text.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        ".nan" | ".NaN" | ".NAN" if unsigned.len() == text.len() => return Some(f64::NAN),
        _ => {}
    }
    let bytes = unsigned.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let whole = digits(&mut i);
    let mut fraction = 0;
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        fraction = digits(&mut i);
    }
    if whole == 0 && fraction == 0 {
        return None;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    if i != bytes.len() {
        return None;
    }
    text.parse().ok()
}

/// How a YAML 1.1 reader (PyYAML, serde-saphyr, older tools) would read a plain scalar
/// that the core schema reads otherwise, or `None` when both agree: booleans of every
/// case and `y`/`n`/`yes`/`no`/`on`/`off`, `0127` octal, `0b` binary, `_` in numbers,
/// sexagesimal `1:20`, and `0x`/`0o` with a sign or upper-case prefix.
pub fn yaml11_reading(text: &str) -> Option<&'static str> {
    const BOOLEANS: [&str; 8] = ["y", "yes", "on", "true", "n", "no", "off", "false"];
    if let Some(i) = BOOLEANS.iter().position(|w| text.eq_ignore_ascii_case(w)) {
        if boolean(text).is_some() {
            return None;
        }
        return Some(if i < 4 {
            "the boolean true"
        } else {
            "the boolean false"
        });
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let number_like = |s: &str, radix: u32| {
        !s.is_empty()
            && s.chars().all(|c| c.is_digit(radix) || c == '_')
            && s.chars().any(|c| c.is_digit(radix))
    };
    if unsigned.len() > 1
        && unsigned.starts_with('0')
        && unsigned.bytes().all(|b| b.is_ascii_digit())
    {
        return Some(if unsigned.bytes().all(|b| b <= b'7') {
            "an octal integer"
        } else {
            "text"
        });
    }
    if let Some(d) = unsigned.strip_prefix("0b").or(unsigned.strip_prefix("0B"))
        && number_like(d, 2)
    {
        return Some("a binary integer");
    }
    if text.contains('_')
        && (number_like(unsigned, 10) || float(&unsigned.replace('_', "")).is_some())
    {
        return Some("a number (`_` between digits)");
    }
    for prefix in ["0x", "0X", "0o", "0O"] {
        if let Some(d) = unsigned.strip_prefix(prefix)
            && number_like(d, if prefix.ends_with(['x', 'X']) { 16 } else { 8 })
            && (integer(text).is_none())
        {
            return Some("an integer");
        }
    }
    let parts: Vec<&str> = unsigned.split(':').collect();
    if parts.len() > 1
        && !parts[0].is_empty()
        && parts[0].bytes().all(|b| b.is_ascii_digit() || b == b'_')
        && parts[1..].iter().all(|p| {
            let whole = p.split('.').next().unwrap_or("");
            (1..=2).contains(&whole.len()) && p.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
    {
        return Some("a sexagesimal number (base 60)");
    }
    None
}
