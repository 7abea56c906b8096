package nvim

// EditPermissions implements agent.PermissionsEditor: /permissions opens the
// rules in the fido://permissions buffer; writing it sends the remaining
// lines back (fido_permissions).
func (u *UI) EditPermissions(lines []string) {
	if u.prompts == nil {
		return
	}
	if lines == nil {
		lines = []string{}
	}
	go func() { _ = u.prompts.exec(`require("fido.permissions").open(...)`, lines) }()
}

// PermissionsSaver is a Backend that takes the edited /permissions buffer.
type PermissionsSaver interface {
	SavePermissions(lines []string)
}
