package childproc

import (
	"syscall"
	"testing"
)

func TestAttrDiesWithParentOnLinux(t *testing.T) {
	if a := Attr(); a.Pdeathsig != syscall.SIGKILL || !DiesWithParent() {
		t.Errorf("Pdeathsig %v, DiesWithParent %v: on Linux a child dies with the harness", a.Pdeathsig, DiesWithParent())
	}
}
