// Package notionemu is a strict local emulator of the part of the Notion API
// that claimdeck speaks, under Notion-Version 2022-06-28, 2025-09-03,
// 2026-03-11 and 2026-12-01 (each version's behaviour keyed on the request's
// Notion-Version header): database retrieve and query, data source retrieve and query
// (a database holds one or more data sources), page retrieve, create and
// update, and page comments.
//
// It exists so that backends and their tests can run against something that
// rejects what real Notion rejects: requests without a bearer token or a
// Notion-Version header, unknown properties, values of the wrong type, a
// select cleared with {"name": ""} instead of null, rich text over 2,000
// characters, pages of more than 100 results. It paginates at 100, rounds
// created_time and last_edited_time down to the minute, rate-limits each
// integration token with 429 and Retry-After (a token bucket, or fixed
// windows whose Retry-After runs past a minute), refuses comments to an
// integration without the comment capabilities (403), answers 409
// conflict_error to writes that collide, and injects 409, 429, 5xx and 529
// faults — including writes that land and then answer 5xx — and latency
// on demand. Stats counts requests and the bytes of payload served.
//
// The emulator knows Notion's wire format and nothing of claimdeck's model:
// no task states, leases or vocabularies live here, only database schemas
// (the presets mirror the seeds' property names) and page values.
//
// A Server is an http.Handler; serve it with httptest.NewServer or
// http.Server, or call Serve.
package notionemu
