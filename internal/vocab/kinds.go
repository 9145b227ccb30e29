package vocab

// PermissionMode is how tool calls that need approval are handled.
type PermissionMode string

// The permission modes, in the reference's order.
const (
	PermissionDefault     PermissionMode = "default"
	PermissionAcceptEdits PermissionMode = "acceptEdits"
	PermissionBypass      PermissionMode = "bypassPermissions"
	PermissionPlan        PermissionMode = "plan"
	PermissionDontAsk     PermissionMode = "dontAsk"
	PermissionAuto        PermissionMode = "auto"
)

// PermissionModes is the permission mode vocabulary. "manual" is accepted
// as another name of default, as settings files and the SDKs allow.
var PermissionModes = Set[PermissionMode]{
	kind: "permission mode",
	values: []PermissionMode{PermissionDefault, PermissionAcceptEdits, PermissionBypass,
		PermissionPlan, PermissionDontAsk, PermissionAuto},
	aliases: []alias[PermissionMode]{{"manual", PermissionDefault}},
}

// ParsePermissionMode parses a permission mode; see PermissionModes.
func ParsePermissionMode(s string) (PermissionMode, error) { return PermissionModes.Parse(s) }

// Effort is how much effort the model spends on a reply.
type Effort string

// The effort levels, lowest first.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
	EffortXHigh  Effort = "xhigh"
	EffortMax    Effort = "max"
)

// Efforts is the effort vocabulary.
var Efforts = Set[Effort]{kind: "effort", values: []Effort{EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax}}

// ParseEffort parses an effort level; see Efforts.
func ParseEffort(s string) (Effort, error) { return Efforts.Parse(s) }

// ThinkingType is the kind of extended thinking of a request.
type ThinkingType string

// The thinking types.
const (
	// ThinkingAdaptive lets the model decide how much to think.
	ThinkingAdaptive ThinkingType = "adaptive"
	// ThinkingEnabled thinks with a token budget.
	ThinkingEnabled ThinkingType = "enabled"
	// ThinkingDisabled does not think.
	ThinkingDisabled ThinkingType = "disabled"
)

// ThinkingTypes is the thinking type vocabulary.
var ThinkingTypes = Set[ThinkingType]{kind: "thinking type", values: []ThinkingType{ThinkingAdaptive, ThinkingEnabled, ThinkingDisabled}}

// ParseThinkingType parses a thinking type; see ThinkingTypes.
func ParseThinkingType(s string) (ThinkingType, error) { return ThinkingTypes.Parse(s) }

// ThinkingDisplay is whether thinking text comes back in the stream.
type ThinkingDisplay string

// The thinking displays.
const (
	ThinkingSummarized ThinkingDisplay = "summarized"
	ThinkingOmitted    ThinkingDisplay = "omitted"
)

// ThinkingDisplays is the thinking display vocabulary.
var ThinkingDisplays = Set[ThinkingDisplay]{kind: "thinking display", values: []ThinkingDisplay{ThinkingSummarized, ThinkingOmitted}}

// ParseThinkingDisplay parses a thinking display; see ThinkingDisplays.
func ParseThinkingDisplay(s string) (ThinkingDisplay, error) { return ThinkingDisplays.Parse(s) }

// Behavior is what a permission rule, or a permission decision, does to a
// tool call.
type Behavior string

// The permission behaviours.
const (
	Allow Behavior = "allow"
	Deny  Behavior = "deny"
	Ask   Behavior = "ask"
)

// Behaviors is the permission behaviour vocabulary.
var Behaviors = Set[Behavior]{kind: "behavior", values: []Behavior{Allow, Deny, Ask}}

// ParseBehavior parses a permission behaviour; see Behaviors.
func ParseBehavior(s string) (Behavior, error) { return Behaviors.Parse(s) }
