package gateway

import (
	"github.com/mcp-gateway/mcp-gateway/gateway/prompts"
	"github.com/mcp-gateway/mcp-gateway/gateway/resources"
	"github.com/mcp-gateway/mcp-gateway/gateway/tools"
)

// The policy types are the tools feature's, the declared resources and
// prompts those features'; they are named here so that the command
// configures them through gateway alone (only gateway imports feature
// packages).
type (
	// Policy is who may see and call which tool, and how much.
	Policy = tools.Policy
	// ScopeRule requires scopes for the tools it names.
	ScopeRule = tools.ScopeRule
	// ToolLimit is a per-tool rate limit.
	ToolLimit = tools.ToolLimit
	// QuotaRule counts the calls of matching tools in fixed windows.
	QuotaRule = tools.QuotaRule
	// Webhook is the policy hook asked before each admitted call.
	Webhook = tools.Webhook
)

type (
	// DeclaredResource is a resource from the configuration.
	DeclaredResource = resources.Declared
	// DeclaredPrompt is a prompt from the configuration.
	DeclaredPrompt = prompts.Declared
	// PromptArgument is an argument of a declared prompt.
	PromptArgument = prompts.Argument
	// PromptMessage is a message of a declared prompt.
	PromptMessage = prompts.Message
	// PromptMedia is an image or audio of a prompt message.
	PromptMedia = prompts.Media
	// PromptOperation is a tool a prompt message embeds the result of.
	PromptOperation = prompts.Operation
	// PromptValuesFrom is a tool whose result lists an argument's
	// completion candidates.
	PromptValuesFrom = prompts.ValuesFrom
)
