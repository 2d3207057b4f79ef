//! The verdict of every schema change kind, per direction: the vocabulary in one place.

use super::{Breaks, Models, SchemaSide};
use crate::language::contract_rules::change_kind::ChangeKind;

/// The verdict of every kind, per direction: one table, a row per group of kinds giving
/// the verdict as an input change (arguments a client sends) and as an output change
/// (structured content a server returns). The match is exhaustive, so a new kind must
/// get a row here.
pub fn verdict(kind: ChangeKind, dir: SchemaSide) -> (Breaks, Models) {
    use Breaks as B;
    use ChangeKind as K;
    use Models as M;
    // A kind the comparator never emits in that direction (or at all).
    const NOT_THIS_WAY: (Breaks, Models) = (B::Unknown, M::Possibly);
    let (input, output) = match kind {
        K::RequiredParameterAdded
        | K::ParameterRemoved
        | K::ParameterRenamed
        | K::ParameterBecameRequired => ((B::Yes, M::Yes), NOT_THIS_WAY),
        K::OptionalParameterAdded | K::ParameterBecameOptional | K::TypeWidened => {
            ((B::No, M::Possibly), NOT_THIS_WAY)
        }
        K::TypeChanged | K::ConstChanged | K::PatternChanged | K::FormatChanged => {
            ((B::Yes, M::Yes), (B::Yes, M::Possibly))
        }
        // A narrowed type (the reference's summary: Yes / Yes): values the model used to
        // send are now refused, so it must learn the new constraint; narrower output is
        // still valid for the client.
        K::EnumAdded
        | K::EnumValuesRemoved
        | K::ConstAdded
        | K::BoundNarrowed
        | K::PatternAdded
        | K::FormatAdded
        | K::AdditionalPropertiesRestricted => ((B::Yes, M::Yes), (B::No, M::No)),
        K::EnumValuesAdded | K::EnumRemoved | K::ConstRemoved => {
            ((B::No, M::Possibly), (B::Yes, M::Possibly))
        }
        K::BoundWidened | K::PatternRemoved | K::FormatRemoved | K::AdditionalPropertiesRelaxed => {
            ((B::No, M::No), (B::Yes, M::Possibly))
        }
        // An edited description or title (the reference's summary: No / Yes).
        K::ParameterDescriptionChanged => ((B::No, M::Yes), (B::No, M::Possibly)),
        K::ParameterTitleChanged => ((B::No, M::Yes), (B::No, M::No)),
        K::DefaultChanged => ((B::No, M::Possibly), (B::No, M::No)),
        // HTTP clients re-fetch the list on -32020 and then send the header.
        K::XMcpHeaderAdded | K::XMcpHeaderChanged | K::XMcpHeaderRemoved => {
            ((B::No, M::No), (B::No, M::No))
        }
        K::OutputPropertyRemoved | K::OutputPropertyRenamed | K::OutputPropertyNoLongerRequired => {
            (NOT_THIS_WAY, (B::Yes, M::Possibly))
        }
        K::OutputPropertyAdded => (NOT_THIS_WAY, (B::No, M::Possibly)),
        K::OutputPropertyNowRequired => (NOT_THIS_WAY, (B::No, M::No)),
        // Not kinds of a schema node: the schema comparator never emits them.
        K::Removed
        | K::Added
        | K::Renamed
        | K::TitleChanged
        | K::DescriptionChanged
        | K::AnnotationsChanged
        | K::NameChanged
        | K::UriChanged
        | K::UriTemplateChanged
        | K::MimeTypeChanged
        | K::InvalidXMcpHeader
        | K::TaskSupportNarrowed
        | K::TaskSupportWidened
        | K::ExecutionChanged
        | K::OutputSchemaAdded
        | K::OutputSchemaRemoved
        | K::RequiredArgumentAdded
        | K::OptionalArgumentAdded
        | K::ArgumentRemoved
        | K::ArgumentBecameRequired
        | K::ArgumentBecameOptional
        | K::ArgumentDescriptionChanged
        | K::ArgumentTitleChanged
        | K::ProtocolVersionDropped
        | K::ProtocolVersionAdded
        | K::CapabilityRemoved
        | K::CapabilityAdded
        | K::CapabilityChanged
        | K::ExtensionRemoved
        | K::ExtensionAdded
        | K::InstructionsChanged
        | K::UnknownSchemaChange => (NOT_THIS_WAY, NOT_THIS_WAY),
    };
    match dir {
        SchemaSide::Input => input,
        SchemaSide::Output => output,
    }
}
