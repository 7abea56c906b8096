// Package text holds the small string formatters every part of Fido
// shares, so that a duration, a byte size or a shortened line reads the
// same in a tool result, the transcript, the status bar and an error:
//
//   - Shorten, ShortenTo: cut to a number of characters, marked with "…";
//   - Collapse: one line of plain text (whitespace runs become one space,
//     control characters go);
//   - FirstLine, Headline: the first line of a text, alone or with how many
//     lines it leaves out;
//   - Duration, Clock, ExactDuration: a duration for a sentence, for a
//     ticking display, and for a limit stated in prose;
//   - Size: a byte count in the unit that holds it exactly;
//   - Count, Plural: "3 files", and the noun alone ("files").
//
// It imports only the standard library, so the tool contract and every
// package above it may use it.
package text
