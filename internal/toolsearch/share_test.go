package toolsearch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// TestSameInfoComparesEveryField checks that two infos differing in any
// one field are different to the base cache, so that a field added to
// tool.Info later cannot make two sessions share a wrong catalog.
func TestSameInfoComparesEveryField(t *testing.T) {
	base := tool.Info{Name: "A", Description: "d", InputSchema: json.RawMessage(`{}`), SearchHint: "h"}
	if !sameInfo(base, base) {
		t.Fatal("an info differs from itself")
	}
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		other := base
		f := reflect.ValueOf(&other).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int:
			f.SetInt(f.Int() + 1)
		case reflect.Slice:
			f.SetBytes(append([]byte(`{"x":1}`), f.Bytes()...))
		default:
			t.Fatalf("field %s has kind %s, which this test does not vary: teach sameInfo and this test", v.Type().Field(i).Name, f.Kind())
		}
		if sameInfo(base, other) {
			t.Errorf("infos differing only in %s are the same to sameInfo", v.Type().Field(i).Name)
		}
	}
}

// TestCatalogsShareUntilChanged checks that catalogs of the same deferred
// tools share one base, and that Replace on one leaves the others as they
// were.
func TestCatalogsShareUntilChanged(t *testing.T) {
	deferred := []tool.Info{
		{Name: "ShareTestA", Description: "first tool"},
		{Name: "ShareTestB", Description: "second tool"},
	}
	a, b := NewCatalog(deferred), NewCatalog(deferred)
	if &a.tools[0] != &b.tools[0] {
		t.Fatal("two catalogs of the same tools do not share their entries")
	}
	deferred[0].Description = "changed by the caller"
	if got := NewCatalog(deferred); &got.tools[0] == &a.tools[0] {
		t.Fatal("a catalog of other tools shares the base")
	}
	a.Replace([]string{"ShareTestA"}, []tool.Info{{Name: "ShareTestC", Description: "third"}})
	if diff := cmp.Diff([]string{"ShareTestA", "ShareTestB"}, b.Names()); diff != "" {
		t.Fatalf("Replace on one catalog changed another (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ShareTestB", "ShareTestC"}, a.Names()); diff != "" {
		t.Fatalf("Replace (-want +got):\n%s", diff)
	}
	if _, ok := b.Lookup("ShareTestC"); ok {
		t.Fatal("a tool added to one catalog is found in another")
	}
	c := NewCatalog([]tool.Info{{Name: "ShareTestA", Description: "first tool"}, {Name: "ShareTestB", Description: "second tool"}})
	if diff := cmp.Diff([]string{"ShareTestA", "ShareTestB"}, c.Names()); diff != "" {
		t.Fatalf("a new catalog after Replace (-want +got):\n%s", diff)
	}
}

// TestAnnouncementFollowsReplace checks that the kept announcement is
// dropped when the catalog changes.
func TestAnnouncementFollowsReplace(t *testing.T) {
	c := NewCatalog([]tool.Info{{Name: "AnnTestA", Description: "a"}})
	first := Announcement(c)
	if again := Announcement(c); again != first {
		t.Fatal("the announcement changed with the catalog unchanged")
	}
	c.Replace(nil, []tool.Info{{Name: "AnnTestB", Description: "b"}})
	after := Announcement(c)
	if after == first || !strings.Contains(after, "AnnTestB") {
		t.Fatalf("after Replace the announcement is still the old one:\n%s", after)
	}
}

// TestAnnouncementShared: catalogs on one base share one announcement text
// (made once, not once per session); a catalog changed by Replace makes its
// own, and the others keep the base's.
func TestAnnouncementShared(t *testing.T) {
	deferred := []tool.Info{{Name: "AnnShareA", Description: "a"}, {Name: "AnnShareB", Description: "b"}}
	a, b := NewCatalog(deferred), NewCatalog(deferred)
	ta, tb := Announcement(a), Announcement(b)
	if ta != tb || unsafe.StringData(ta) != unsafe.StringData(tb) {
		t.Fatal("two catalogs on one base made two announcements")
	}
	b.Replace([]string{"AnnShareA"}, nil)
	if got := Announcement(b); strings.Contains(got, "AnnShareA") || !strings.Contains(got, "AnnShareB") {
		t.Fatalf("after Replace:\n%s", got)
	}
	if got := Announcement(NewCatalog(deferred)); unsafe.StringData(got) != unsafe.StringData(ta) {
		t.Fatal("a new catalog on the base does not share its announcement")
	}
	if got := Announcement(a); got != ta {
		t.Fatalf("Replace on one catalog changed another's announcement:\n%s", got)
	}
}
