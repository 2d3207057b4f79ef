//! The verdict of every schema change kind, per direction: the vocabulary in one place.

use super::*;

/// The verdict of every kind, per direction: the vocabulary in one place.
pub fn verdict(kind: ChangeKind, dir: Direction) -> (Breaks, Models) {
    use Breaks as B;
    use Models as M;
    match dir {
        Direction::Input => match kind {
            ChangeKind::RequiredParameterAdded
            | ChangeKind::ParameterRemoved
            | ChangeKind::ParameterRenamed => (B::Yes, M::Yes),
            ChangeKind::ParameterBecameRequired => (B::Yes, M::Yes),
            ChangeKind::OptionalParameterAdded | ChangeKind::ParameterBecameOptional => {
                (B::No, M::Possibly)
            }
            ChangeKind::TypeChanged | ChangeKind::EnumAdded | ChangeKind::EnumValuesRemoved => {
                (B::Yes, M::Yes)
            }
            ChangeKind::ConstAdded | ChangeKind::ConstChanged => (B::Yes, M::Yes),
            ChangeKind::TypeWidened
            | ChangeKind::EnumValuesAdded
            | ChangeKind::EnumRemoved
            | ChangeKind::ConstRemoved => (B::No, M::Possibly),
            // A narrowed type (the reference's summary: Yes / Yes): values the model
            // used to send are now refused, so it must learn the new constraint.
            ChangeKind::BoundNarrowed
            | ChangeKind::PatternAdded
            | ChangeKind::PatternChanged
            | ChangeKind::FormatAdded
            | ChangeKind::FormatChanged => (B::Yes, M::Yes),
            ChangeKind::AdditionalPropertiesRestricted => (B::Yes, M::Yes),
            ChangeKind::BoundWidened
            | ChangeKind::PatternRemoved
            | ChangeKind::FormatRemoved
            | ChangeKind::AdditionalPropertiesRelaxed => (B::No, M::No),
            // An edited description or title (the reference's summary: No / Yes).
            ChangeKind::ParameterDescriptionChanged | ChangeKind::ParameterTitleChanged => {
                (B::No, M::Yes)
            }
            ChangeKind::DefaultChanged => (B::No, M::Possibly),
            // HTTP clients re-fetch the list on -32020 and then send the header.
            ChangeKind::XMcpHeaderAdded
            | ChangeKind::XMcpHeaderChanged
            | ChangeKind::XMcpHeaderRemoved => (B::No, M::No),
            // Not kinds of a schema node: the schema comparator never emits them.
            ChangeKind::Removed
            | ChangeKind::Added
            | ChangeKind::Renamed
            | ChangeKind::TitleChanged
            | ChangeKind::DescriptionChanged
            | ChangeKind::AnnotationsChanged
            | ChangeKind::NameChanged
            | ChangeKind::UriChanged
            | ChangeKind::UriTemplateChanged
            | ChangeKind::MimeTypeChanged
            | ChangeKind::InvalidXMcpHeader
            | ChangeKind::TaskSupportNarrowed
            | ChangeKind::TaskSupportWidened
            | ChangeKind::ExecutionChanged
            | ChangeKind::OutputPropertyRemoved
            | ChangeKind::OutputPropertyRenamed
            | ChangeKind::OutputPropertyAdded
            | ChangeKind::OutputPropertyNoLongerRequired
            | ChangeKind::OutputPropertyNowRequired
            | ChangeKind::OutputSchemaAdded
            | ChangeKind::OutputSchemaRemoved
            | ChangeKind::RequiredArgumentAdded
            | ChangeKind::OptionalArgumentAdded
            | ChangeKind::ArgumentRemoved
            | ChangeKind::ArgumentBecameRequired
            | ChangeKind::ArgumentBecameOptional
            | ChangeKind::ArgumentDescriptionChanged
            | ChangeKind::ArgumentTitleChanged
            | ChangeKind::ProtocolVersionDropped
            | ChangeKind::ProtocolVersionAdded
            | ChangeKind::CapabilityRemoved
            | ChangeKind::CapabilityAdded
            | ChangeKind::CapabilityChanged
            | ChangeKind::ExtensionRemoved
            | ChangeKind::ExtensionAdded
            | ChangeKind::InstructionsChanged => (B::Unknown, M::Possibly),
            ChangeKind::UnknownSchemaChange => (B::Unknown, M::Possibly),
        },
        Direction::Output => match kind {
            ChangeKind::OutputPropertyRemoved
            | ChangeKind::OutputPropertyRenamed
            | ChangeKind::OutputPropertyNoLongerRequired => (B::Yes, M::Possibly),
            ChangeKind::OutputPropertyAdded => (B::No, M::Possibly),
            ChangeKind::OutputPropertyNowRequired => (B::No, M::No),
            ChangeKind::TypeChanged => (B::Yes, M::Possibly),
            ChangeKind::EnumValuesAdded
            | ChangeKind::EnumRemoved
            | ChangeKind::ConstRemoved
            | ChangeKind::BoundWidened
            | ChangeKind::PatternRemoved => (B::Yes, M::Possibly),
            ChangeKind::FormatRemoved | ChangeKind::AdditionalPropertiesRelaxed => {
                (B::Yes, M::Possibly)
            }
            ChangeKind::EnumValuesRemoved
            | ChangeKind::EnumAdded
            | ChangeKind::ConstAdded
            | ChangeKind::BoundNarrowed
            | ChangeKind::PatternAdded => (B::No, M::No),
            ChangeKind::FormatAdded | ChangeKind::AdditionalPropertiesRestricted => (B::No, M::No),
            ChangeKind::ConstChanged | ChangeKind::PatternChanged | ChangeKind::FormatChanged => {
                (B::Yes, M::Possibly)
            }
            ChangeKind::ParameterDescriptionChanged => (B::No, M::Possibly),
            ChangeKind::ParameterTitleChanged | ChangeKind::DefaultChanged => (B::No, M::No),
            ChangeKind::XMcpHeaderAdded
            | ChangeKind::XMcpHeaderChanged
            | ChangeKind::XMcpHeaderRemoved => (B::No, M::No),
            // Not kinds of a schema node: the schema comparator never emits them.
            ChangeKind::Removed
            | ChangeKind::Added
            | ChangeKind::Renamed
            | ChangeKind::TitleChanged
            | ChangeKind::DescriptionChanged
            | ChangeKind::AnnotationsChanged
            | ChangeKind::NameChanged
            | ChangeKind::UriChanged
            | ChangeKind::UriTemplateChanged
            | ChangeKind::MimeTypeChanged
            | ChangeKind::RequiredParameterAdded
            | ChangeKind::OptionalParameterAdded
            | ChangeKind::ParameterRemoved
            | ChangeKind::ParameterRenamed
            | ChangeKind::ParameterBecameRequired
            | ChangeKind::ParameterBecameOptional
            | ChangeKind::TypeWidened
            | ChangeKind::InvalidXMcpHeader
            | ChangeKind::TaskSupportNarrowed
            | ChangeKind::TaskSupportWidened
            | ChangeKind::ExecutionChanged
            | ChangeKind::OutputSchemaAdded
            | ChangeKind::OutputSchemaRemoved
            | ChangeKind::RequiredArgumentAdded
            | ChangeKind::OptionalArgumentAdded
            | ChangeKind::ArgumentRemoved
            | ChangeKind::ArgumentBecameRequired
            | ChangeKind::ArgumentBecameOptional
            | ChangeKind::ArgumentDescriptionChanged
            | ChangeKind::ArgumentTitleChanged
            | ChangeKind::ProtocolVersionDropped
            | ChangeKind::ProtocolVersionAdded
            | ChangeKind::CapabilityRemoved
            | ChangeKind::CapabilityAdded
            | ChangeKind::CapabilityChanged
            | ChangeKind::ExtensionRemoved
            | ChangeKind::ExtensionAdded
            | ChangeKind::InstructionsChanged => (B::Unknown, M::Possibly),
            ChangeKind::UnknownSchemaChange => (B::Unknown, M::Possibly),
        },
    }
}
