// Package sessions holds the protocol state of session-era MCP clients:
// session records and the event logs that back their push streams.
//
// Store is the contract; Memory is the embedded single-replica
// implementation. A Redis implementation sits beside it so that any replica
// can answer for any session. The package imports no sibling package.
package sessions
