package childproc

import "testing"

func TestAttr(t *testing.T) {
	a := Attr()
	if !a.Setpgid {
		t.Error("a child needs a process group of its own")
	}
	if Attr() == a {
		t.Error("each child needs an attribute struct of its own")
	}
}
