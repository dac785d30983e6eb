// Package prompts is the MCP prompts feature: prompts/list and prompts/get
// over the prompts the operator declares (Config.Declared). A prompt's
// messages are text templates over its arguments, images, audio, or
// resources read through Deps.ReadResource when the prompt is got. Its
// arguments' completion candidates are what ArgumentValues hands the
// completion feature.
//
// It registers its methods on the server's method table and sees requests
// only as gateway/mcp values. It must not import package gateway, the
// transport, or another feature package: the resources it embeds come
// through a func field.
package prompts
