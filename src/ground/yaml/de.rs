//! Typed values from the tree of [`super::tree`]: a serde `Deserializer` over its nodes.
//! A plain scalar is read as the type asks for it (`123` is a number to a number and text
//! to a string), and by the YAML 1.2 core schema ([`super::schema`]) when any value will do; a quoted or
//! block scalar is always text. Every error is placed at the innermost node it was found
//! in, and [`super::value::At`] learns its node's position through [`AT`].

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};

use super::error::Error;
use super::schema::{CoreTag, Scalar};
use super::schema::{Number, Resolved, boolean, resolve};
use super::tree::{self, Kind, Node};

/// The newtype-struct name by which [`super::value::At`] asks for its node's position:
/// this deserializer answers with a sequence of (line, column, value); any other gives
/// the value alone.
pub const AT: &str = "$mcpspec::yaml::At";

/// Read `text` as a `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    from_node(&tree::read(text)?)
}

/// Build a `T` from a read document.
pub fn from_node<T: DeserializeOwned>(node: &Node) -> Result<T, Error> {
    T::deserialize(NodeDe(node))
}

/// An integer past 64 bits would lose digits as a JSON number: refused where it is,
/// never rounded (YAML 1.2 reads it as an integer, so it is no text either).
fn too_large() -> Error {
    de::Error::custom(
        "an integer past 64 bits (at most 18446744073709551615, at least -9223372036854775808): quote it for text, or write it as a float (1e20)",
    )
}

/// JSON has no infinity or NaN: a value that reads as one is refused where it is.
fn finite(f: f64) -> Result<f64, Error> {
    if f.is_finite() {
        Ok(f)
    } else {
        Err(de::Error::custom(
            "infinity and NaN are not numbers here (JSON has neither): quote the value for text",
        ))
    }
}

fn unexpected<'s>(node: &'s Node) -> Unexpected<'s> {
    match &node.kind {
        Kind::Scalar(s) => match resolve(s) {
            Resolved::Null => Unexpected::Unit,
            Resolved::Bool(b) => Unexpected::Bool(b),
            Resolved::Number(Number::Int(i)) => Unexpected::Signed(i),
            Resolved::Number(Number::Uint(u)) => Unexpected::Unsigned(u),
            Resolved::Number(Number::Float(f)) => Unexpected::Float(f),
            Resolved::Number(Number::TooLarge) => Unexpected::Other("an integer past 64 bits"),
            Resolved::Str(t) => Unexpected::Str(t),
        },
        Kind::Seq(_) => Unexpected::Seq,
        Kind::Map(_) => Unexpected::Map,
        Kind::Shared(target) => unexpected(target),
    }
}

/// A deserializer for one node.
#[derive(Clone, Copy)]
struct NodeDe<'n, 'a>(&'n Node<'a>);

impl<'n, 'a> NodeDe<'n, 'a> {
    fn node(&self) -> &'n Node<'a> {
        self.0.resolved()
    }

    fn scalar(&self) -> Option<&'n Scalar<'a>> {
        match &self.node().kind {
            Kind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    fn place<T>(&self, result: Result<T, Error>) -> Result<T, Error> {
        result.map_err(|e| e.or_at(self.0.line, self.0.col))
    }

    fn wrong<T>(&self, expected: &dyn de::Expected) -> Result<T, Error> {
        self.place(Err(de::Error::invalid_type(
            unexpected(self.node()),
            expected,
        )))
    }

    /// A number for a numeric target: a plain (or `!!int`/`!!float`) scalar only.
    fn number<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let number = self
            .scalar()
            .filter(|s| s.plain || matches!(s.tag, CoreTag::Int | CoreTag::Float))
            .and_then(|s| match resolve(s) {
                Resolved::Number(n) => Some(n),
                _ => None,
            });
        let Some(number) = number else {
            return self.wrong(&visitor);
        };
        self.place(match number {
            Number::Int(i) => visitor.visit_i64(i),
            Number::Uint(u) => visitor.visit_u64(u),
            Number::Float(f) => finite(f).and_then(|f| visitor.visit_f64(f)),
            Number::TooLarge => Err(too_large()),
        })
    }
}

macro_rules! numbers {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.number(visitor)
        }
    )*};
}

impl<'de, 'n, 'a> de::Deserializer<'de> for NodeDe<'n, 'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node().kind {
            Kind::Scalar(s) => match resolve(s) {
                Resolved::Null => visitor.visit_unit(),
                Resolved::Bool(b) => visitor.visit_bool(b),
                Resolved::Number(Number::Int(i)) => visitor.visit_i64(i),
                Resolved::Number(Number::Uint(u)) => visitor.visit_u64(u),
                Resolved::Number(Number::Float(f)) => finite(f).and_then(|f| visitor.visit_f64(f)),
                Resolved::Number(Number::TooLarge) => Err(too_large()),
                Resolved::Str(t) => visitor.visit_str(t),
            },
            Kind::Seq(items) => visitor.visit_seq(Items(items.iter())),
            Kind::Map(entries) => visitor.visit_map(Entries {
                entries: entries.iter(),
                value: None,
            }),
            Kind::Shared(_) => unreachable!("resolved"),
        };
        self.place(result)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.scalar() {
            Some(s) if s.plain || s.tag == CoreTag::Bool => match boolean(&s.text) {
                Some(b) => self.place(visitor.visit_bool(b)),
                None => self.place(Err(de::Error::custom("invalid boolean"))),
            },
            _ => self.wrong(&visitor),
        }
    }

    numbers!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64);

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.scalar() {
            Some(s) => self.place(visitor.visit_str(&s.text)),
            None => self.wrong(&visitor),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.node().is_null() {
            self.place(visitor.visit_none())
        } else {
            self.place(visitor.visit_some(self))
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.node().is_null() {
            self.place(visitor.visit_unit())
        } else {
            self.wrong(&visitor)
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name == AT {
            return self.place(visitor.visit_seq(Positioned {
                node: self.0,
                next: 0,
            }));
        }
        self.place(visitor.visit_newtype_struct(self))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.node().kind {
            Kind::Seq(items) => self.place(visitor.visit_seq(Items(items.iter()))),
            _ => self.wrong(&visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.node().kind {
            Kind::Map(entries) => self.place(visitor.visit_map(Entries {
                entries: entries.iter(),
                value: None,
            })),
            _ => self.wrong(&visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match &self.node().kind {
            Kind::Scalar(_) => self.place(visitor.visit_enum(Variant {
                name: self,
                value: None,
            })),
            Kind::Map(entries) if entries.len() == 1 => {
                let (name, value) = &entries[0];
                self.place(visitor.visit_enum(Variant {
                    name: NodeDe(name),
                    value: Some(NodeDe(value)),
                }))
            }
            _ => self.wrong(&visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

/// The items of a list.
struct Items<'n, 'a>(std::slice::Iter<'n, Node<'a>>);

impl<'de> SeqAccess<'de> for Items<'_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|node| seed.deserialize(NodeDe(node)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// The entries of a mapping.
struct Entries<'n, 'a> {
    entries: std::slice::Iter<'n, (Node<'a>, Node<'a>)>,
    value: Option<&'n Node<'a>>,
}

impl<'de> MapAccess<'de> for Entries<'_, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(NodeDe(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self.value.take().expect("a key before its value");
        seed.deserialize(NodeDe(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A node's line, column and value, for [`AT`].
struct Positioned<'n, 'a> {
    node: &'n Node<'a>,
    next: u8,
}

impl<'de> SeqAccess<'de> for Positioned<'_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.next += 1;
        match self.next {
            1 => seed
                .deserialize(self.node.line.into_deserializer())
                .map(Some),
            2 => seed
                .deserialize(self.node.col.into_deserializer())
                .map(Some),
            3 => seed.deserialize(NodeDe(self.node)).map(Some),
            _ => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(3usize.saturating_sub(self.next as usize))
    }
}

/// An enum: a scalar names a unit variant; a one-entry mapping names a variant and holds
/// its content.
struct Variant<'n, 'a> {
    name: NodeDe<'n, 'a>,
    value: Option<NodeDe<'n, 'a>>,
}

impl<'de, 'n, 'a> EnumAccess<'de> for Variant<'n, 'a> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let name = self.name.place(seed.deserialize(NodeDe(self.name.0)))?;
        Ok((name, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'_, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            None => Ok(()),
            Some(value) if value.node().is_null() => Ok(()),
            Some(value) => value.wrong(&"a variant with no value"),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.value {
            Some(value) => seed.deserialize(value),
            None => self.name.wrong(&"a variant with a value"),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Some(value) => de::Deserializer::deserialize_seq(value, visitor),
            None => self.name.wrong(&visitor),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Some(value) => de::Deserializer::deserialize_map(value, visitor),
            None => self.name.wrong(&visitor),
        }
    }
}
