//! The request as an elicitation form (docs/contract.md §6, MCP elicitation).

use std::borrow::Cow;
use std::collections::BTreeMap;

use ask_user_core::{AskUserQuestionRequest, Question};
use rmcp::model::{
    BooleanSchema, ConstTitle, ElicitRequestParams, ElicitationSchema, EnumSchema,
    LegacyEnumSchema, MultiSelectEnumSchema, PrimitiveSchemaDefinition, ProtocolVersion,
    SingleSelectEnumSchema, StringSchema, TitledItems, TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema,
};
use serde_json::{Value, json};

/// The title of the extra field where the human types their own answer.
pub const OWN_ANSWER_TITLE: &str = "Your own answer";
/// Its description on a single-select question (the own answer replaces the choice).
pub const OWN_ANSWER_INSTEAD: &str = "Optional: type this instead of choosing an option.";
/// Its description on a multi-select question (the own answer adds to the choices).
pub const OWN_ANSWER_BESIDE: &str =
    "Optional: type this in addition to, or instead of, the options.";
/// [`FormStyle::Codex`]: the last option of a choice question, which brings a second form to
/// type the own answer in (see [`own_choice_label`] when an option already has this label).
pub const OWN_ANSWER_CHOICE: &str = "Type my own answer";
/// [`FormStyle::Codex`]: the message of the second form, above the questions whose own answer
/// the human chose to type.
pub const OWN_ANSWER_NEXT: &str = "Type your own answer:";

/// Which form shapes the client's negotiated protocol version allows (docs/contract.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormStyle {
    /// Protocol 2025-06-18 and older: primitive properties only. A single-select question is a
    /// string with `enum` + `enumNames` (no `default`), a multi-select question one boolean per
    /// option (the recommended one `default: true`), free text and own answers plain strings;
    /// the request carries no `mode`.
    Primitive,
    /// Protocol 2025-11-25 and later: a single-select question is a string with titled `oneOf`,
    /// a multi-select question an array with `items.anyOf`, the recommended option the
    /// `default`; the request carries `mode: "form"`.
    Titled,
    /// Codex CLI (any version): [`FormStyle::Primitive`] shapes made submittable in its form
    /// UI, where Enter on an empty text field does nothing and a boolean without a default
    /// starts as true. No text field stands beside a choice question: its last option is
    /// [`OWN_ANSWER_CHOICE`] (a multi-select: one more boolean of that title), and choosing
    /// it brings a second form ([`own_answer_form`]) with a text field for each such question.
    /// Every boolean has `default: false`, the recommended option too (it is marked in its
    /// label), so stepping through ticks nothing.
    Codex,
}

impl FormStyle {
    /// The style for a client that negotiated `version`: [`FormStyle::Titled`] from
    /// 2025-11-25 on, [`FormStyle::Primitive`] before that and when the version is unknown.
    pub fn for_version(version: Option<&ProtocolVersion>) -> Self {
        match version {
            Some(version) if *version >= ProtocolVersion::V_2025_11_25 => Self::Titled,
            _ => Self::Primitive,
        }
    }

    /// Whether the form uses only 2025-06-18 primitive shapes (no titled `oneOf`, no arrays).
    fn primitive(self) -> bool {
        matches!(self, Self::Primitive | Self::Codex)
    }
}

/// What one form field stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldKind {
    /// A single-select question: a string with titled `oneOf`.
    Choice,
    /// A multi-select question: an array with titled `items.anyOf`.
    Choices,
    /// A question without options: a free-text string.
    Text,
    /// The optional own-answer string beside a choice question.
    OwnAnswer,
    /// One option of a multi-select question, by its index, as a boolean
    /// ([`FormStyle::Primitive`]): `true` chooses it.
    Option(usize),
    /// [`FormStyle::Codex`]: the [`OWN_ANSWER_CHOICE`] boolean of a multi-select question;
    /// `true` asks for a second form to type the own answer in.
    OwnAnswerChoice,
}

/// One property of the form and the question it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The property name in the schema and in the client's content.
    pub key: String,
    /// Index of the question in the request.
    pub question: usize,
    /// What the field holds.
    pub kind: FieldKind,
}

/// An elicitation form for one request: the message, the schema and how its properties map
/// back to the questions.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// Every question with its header and option descriptions, as plain text.
    pub message: String,
    /// The requested schema; properties in question order.
    pub schema: ElicitationSchema,
    /// The properties, in schema order.
    pub fields: Vec<Field>,
    /// The shapes used.
    pub style: FormStyle,
}

impl Form {
    /// The `elicitation/create` parameters for this form as rmcp's type (which always
    /// carries `mode: "form"`; use [`Form::request_params`] for what goes on the wire).
    pub fn params(&self) -> ElicitRequestParams {
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: self.message.clone(),
            requested_schema: self.schema.clone(),
        }
    }

    /// The `elicitation/create` parameters exactly as sent: `{"mode":"form","message",
    /// "requestedSchema"}` for [`FormStyle::Titled`], `{"message","requestedSchema"}` (no
    /// `mode`, which 2025-06-18 does not know) for [`FormStyle::Primitive`].
    pub fn request_params(&self) -> Value {
        let schema = serde_json::to_value(&self.schema).unwrap_or(Value::Null);
        match self.style {
            FormStyle::Titled => {
                json!({"mode": "form", "message": self.message, "requestedSchema": schema})
            }
            FormStyle::Primitive | FormStyle::Codex => {
                json!({"message": self.message, "requestedSchema": schema})
            }
        }
    }
}

/// Maps `request` to an elicitation form.
///
/// Property names: a question's field is named by its id; a choice question's own-answer field
/// by `<id>.own` (with more `.` appended in the unlikely case another id already uses it).
/// Every field is optional, so the human can skip a question; the recommended option (the
/// first label ending in `(Recommended)`) is the field's `default`.
///
/// With [`FormStyle::Primitive`] a multi-select question has no field of its own but one
/// boolean per option, named `<id>.1`, `<id>.2`, … (1-based option position, titled by the
/// label), followed by its own-answer field. With [`FormStyle::Codex`] a choice question has
/// no own-answer text field: its own answer is the choice [`own_choice_label`] (one more enum
/// value, or for a multi-select the boolean `<id>.own`), typed in [`own_answer_form`].
///
/// `notice`, when given, opens the message (used to say why a previous submission was refused).
pub fn form(request: &AskUserQuestionRequest, notice: Option<&str>, style: FormStyle) -> Form {
    let mut fields = Vec::new();
    let mut properties = BTreeMap::new();
    let mut order = Vec::new();
    let ids: Vec<&str> = request.questions().iter().map(|q| q.id.as_str()).collect();
    let free = |key: String, properties: &BTreeMap<String, PrimitiveSchemaDefinition>| {
        let mut key = key;
        while ids.contains(&key.as_str()) || properties.contains_key(&key) {
            key.push('.');
        }
        key
    };
    for (index, question) in request.questions().iter().enumerate() {
        if style.primitive() && question.multi_select && !question.options.is_empty() {
            let recommended = question.recommended();
            for (position, option) in question.options.iter().enumerate() {
                let key = free(format!("{}.{}", question.id, position + 1), &properties);
                let mut schema = BooleanSchema::new().title(option.label.clone());
                if let Some(description) = &option.description {
                    schema = schema.description(description.clone());
                }
                if style == FormStyle::Codex {
                    schema = schema.with_default(false);
                } else if recommended == Some(position) {
                    schema = schema.with_default(true);
                }
                properties.insert(key.clone(), PrimitiveSchemaDefinition::Boolean(schema));
                order.push(key.clone());
                fields.push(Field {
                    key,
                    question: index,
                    kind: FieldKind::Option(position),
                });
            }
        } else {
            let (kind, schema) =
                question_field(question, style, (index, request.questions().len()));
            properties.insert(question.id.clone(), schema);
            order.push(question.id.clone());
            fields.push(Field {
                key: question.id.clone(),
                question: index,
                kind,
            });
            if kind == FieldKind::Text {
                continue;
            }
        }
        let key = free(format!("{}.own", question.id), &properties);
        if style == FormStyle::Codex {
            // A single-select's own-answer choice is its enum's last value.
            if question.multi_select {
                let schema = BooleanSchema::new()
                    .title(own_choice_label(question))
                    .with_default(false);
                properties.insert(key.clone(), PrimitiveSchemaDefinition::Boolean(schema));
                order.push(key.clone());
                fields.push(Field {
                    key,
                    question: index,
                    kind: FieldKind::OwnAnswerChoice,
                });
            }
            continue;
        }
        let description = if question.multi_select {
            OWN_ANSWER_BESIDE
        } else {
            OWN_ANSWER_INSTEAD
        };
        let count = request.questions().len();
        let title = if style == FormStyle::Titled && count > 1 {
            // Beside several questions, the title says which one it answers.
            format!("{OWN_ANSWER_TITLE} to {}/{count}", index + 1)
        } else {
            OWN_ANSWER_TITLE.to_owned()
        };
        properties.insert(
            key.clone(),
            PrimitiveSchemaDefinition::String(
                StringSchema::new().title(title).description(description),
            ),
        );
        order.push(key.clone());
        fields.push(Field {
            key,
            question: index,
            kind: FieldKind::OwnAnswer,
        });
    }
    let mut schema = ElicitationSchema::new(properties);
    schema.property_order = Some(order);
    Form {
        message: message(request, notice, style),
        schema,
        fields,
        style,
    }
}

/// [`FormStyle::Titled`]'s field title: `i/n ` when the form has several questions, the
/// header chip, the question, and ` (choose any)` on a multi-select.
fn titled_title(question: &Question, (index, count): (usize, usize)) -> String {
    let mut title = String::new();
    if count > 1 {
        title.push_str(&format!("{}/{count} ", index + 1));
    }
    if let Some(header) = &question.header {
        title.push_str(&format!("[{header}] "));
    }
    title.push_str(&question.question);
    if question.multi_select && !question.options.is_empty() {
        title.push_str(" (choose any)");
    }
    title
}

/// [`FormStyle::Titled`]'s field description: the options that have a description, as
/// `Label: description`, joined by ` · `; `None` when no option has one.
fn titled_description(question: &Question) -> Option<String> {
    let described: Vec<String> = question
        .options
        .iter()
        .filter_map(|o| o.description.as_ref().map(|d| format!("{}: {d}", o.label)))
        .collect();
    (!described.is_empty()).then(|| described.join(" \u{b7} "))
}

fn question_field(
    question: &Question,
    style: FormStyle,
    place: (usize, usize),
) -> (FieldKind, PrimitiveSchemaDefinition) {
    let title: Cow<'static, str> = if style == FormStyle::Titled {
        Cow::Owned(titled_title(question, place))
    } else {
        Cow::Owned(question.question.clone())
    };
    let recommended = question
        .recommended()
        .map(|i| question.options[i].label.clone());
    if question.options.is_empty() {
        let schema = StringSchema::new().title(title);
        return (FieldKind::Text, PrimitiveSchemaDefinition::String(schema));
    }
    if style.primitive() {
        // Only single-select reaches here (a primitive multi-select is one boolean per option).
        let mut labels: Vec<String> = question.options.iter().map(|o| o.label.clone()).collect();
        if style == FormStyle::Codex {
            labels.push(own_choice_label(question));
        }
        let mut schema = LegacyEnumSchema::new(labels.clone());
        schema.title = Some(title);
        schema.enum_names = Some(labels);
        let schema = EnumSchema::Legacy(schema);
        return (FieldKind::Choice, PrimitiveSchemaDefinition::Enum(schema));
    }
    let titled: Vec<ConstTitle> = question
        .options
        .iter()
        .map(|o| ConstTitle::new(o.label.clone(), o.label.clone()))
        .collect();
    if question.multi_select {
        let mut schema =
            TitledMultiSelectEnumSchema::new(TitledItems::new(titled)).with_title(title);
        if let Some(description) = titled_description(question) {
            schema = schema.with_description(description);
        }
        if let Some(label) = recommended {
            schema = schema.with_default(vec![label]);
        }
        let schema = EnumSchema::Multi(MultiSelectEnumSchema::Titled(schema));
        (FieldKind::Choices, PrimitiveSchemaDefinition::Enum(schema))
    } else {
        let mut schema = TitledSingleSelectEnumSchema::new(titled);
        schema.title = Some(title);
        schema.description = titled_description(question).map(Cow::Owned);
        schema.default = recommended;
        let schema = EnumSchema::Single(SingleSelectEnumSchema::Titled(schema));
        (FieldKind::Choice, PrimitiveSchemaDefinition::Enum(schema))
    }
}

/// [`FormStyle::Titled`]'s message for a form of several questions (after `N `). Each
/// question is in its own field's title (`1/3 [Header] Question?`), its option descriptions
/// in the field's description, so the message stays one line: hosts show a few lines of it
/// and cut the rest (Claude Code: "… (+7 more lines)").
pub const SEVERAL_QUESTIONS: &str =
    "questions, one field each below; a blank field skips its question.";

/// The message. [`FormStyle::Titled`]: one question's header chip and question, or for
/// several [`SEVERAL_QUESTIONS`] (the fields carry the rest). The primitive styles, whose
/// multi-select fields are bare option labels: every question with its header chip and
/// option descriptions, numbered when there are several.
fn message(request: &AskUserQuestionRequest, notice: Option<&str>, style: FormStyle) -> String {
    let mut out = String::new();
    if let Some(notice) = notice {
        out.push_str(notice);
        out.push_str("\n\n");
    }
    let count = request.questions().len();
    if style == FormStyle::Titled {
        match request.questions() {
            [question] => out.push_str(&titled_title(question, (0, 1))),
            _ => out.push_str(&format!("{count} {SEVERAL_QUESTIONS}")),
        }
        return out;
    }
    for (index, question) in request.questions().iter().enumerate() {
        if index > 0 {
            out.push_str("\n\n");
        }
        if count > 1 {
            out.push_str(&format!("{}/{count} ", index + 1));
        }
        if let Some(header) = &question.header {
            out.push_str(&format!("[{header}] "));
        }
        out.push_str(&question.question);
        if question.multi_select && !question.options.is_empty() {
            out.push_str(match style {
                FormStyle::Titled => " (choose any)",
                FormStyle::Primitive | FormStyle::Codex => " (tick any; none ticked skips it)",
            });
        }
        for option in &question.options {
            match &option.description {
                Some(description) => {
                    out.push_str(&format!("\n- {}: {description}", option.label));
                }
                None => out.push_str(&format!("\n- {}", option.label)),
            }
        }
    }
    out
}

/// The label of [`FormStyle::Codex`]'s own-answer choice for `question`: [`OWN_ANSWER_CHOICE`],
/// with `…` appended while one of the question's options already has that label.
pub fn own_choice_label(question: &Question) -> String {
    let mut label = OWN_ANSWER_CHOICE.to_owned();
    while question.options.iter().any(|o| o.label == label) {
        label.push('…');
    }
    label
}

/// [`FormStyle::Codex`]'s second form: one text field `<id>.own` ([`FieldKind::OwnAnswer`],
/// titled by the question) for each question (by index) whose own-answer choice the human
/// took in the first form, under [`OWN_ANSWER_NEXT`]. Its content is read with
/// [`answers_from_content`](crate::answers_from_content) like any form.
pub fn own_answer_form(request: &AskUserQuestionRequest, questions: &[usize]) -> Form {
    let mut fields = Vec::new();
    let mut properties = BTreeMap::new();
    let mut order = Vec::new();
    let mut message = OWN_ANSWER_NEXT.to_owned();
    for &index in questions {
        let Some(question) = request.questions().get(index) else {
            continue;
        };
        let key = format!("{}.own", question.id);
        let schema = StringSchema::new().title(question.question.clone());
        properties.insert(key.clone(), PrimitiveSchemaDefinition::String(schema));
        order.push(key.clone());
        fields.push(Field {
            key,
            question: index,
            kind: FieldKind::OwnAnswer,
        });
        message.push_str("\n- ");
        message.push_str(&question.question);
    }
    let mut schema = ElicitationSchema::new(properties);
    schema.property_order = Some(order);
    Form {
        message,
        schema,
        fields,
        style: FormStyle::Codex,
    }
}
