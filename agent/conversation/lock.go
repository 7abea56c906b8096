package conversation

import "errors"

// ErrBusy is returned when another Fido (another Neovim) owns a
// conversation: each host writes only its own conversations.
var ErrBusy = errors.New("conversation is open in another Fido")
