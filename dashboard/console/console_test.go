package console

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/fault"
)

// Amounts typed in dollars on the ops page: digits, thousands groups of
// three, at most two decimals; anything else names the field.
func TestFormCents(t *testing.T) {
	for in, want := range map[string]int64{"1250": 125_000, "1,250.5": 125_050, "12,500,000": 1_250_000_000, "0.07": 7, " 3 ": 300} {
		if got, err := formCents("price", in); err != nil || got != want {
			t.Errorf("formCents(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-0.50", "1.+5", "+3", "1,2,3", "1.234", "12,50", "abc", ".5", "1e3"} {
		if got, err := formCents("price", in); err == nil {
			t.Errorf("formCents(%q) = %d, want an error", in, got)
		} else if e, ok := fault.As(err); !ok || e.Field != "price" {
			t.Errorf("formCents(%q) = %v, want a validation error naming price", in, err)
		}
	}
}

// Commissions typed as percentages on the partners page: at most two
// decimals, 0 to 100; anything else names the field.
func TestFormPercent(t *testing.T) {
	for in, want := range map[string]int{"15": 1500, "12.5": 1250, "0": 0, "100": 10_000, " 7.25 ": 725, "3.": 300} {
		if got, err := formPercent("commission", in); err != nil || *got != want {
			t.Errorf("formPercent(%q) = %v, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "100.01", "150", "-1", "1.234", "abc", ".5", "1e2", "12,5",
		"184467440737095516.16", "184467440737095517"} { // w*100 wraps to 0 and to 84
		if got, err := formPercent("commission", in); err == nil {
			t.Errorf("formPercent(%q) = %d, want an error", in, *got)
		} else if e, ok := fault.As(err); !ok || e.Field != "commission" {
			t.Errorf("formPercent(%q) = %v, want a validation error naming commission", in, err)
		}
	}
}

// A form's answer leaves its notice in a cookie for the page it redirects
// to, which shows it once; another page (another tab) neither shows nor
// takes it. The notice is cut to a sentence's length on a character's
// edge, and a cookie that is not one of ours shows nothing.
func TestNotices(t *testing.T) {
	gin.SetMode(gin.TestMode)
	con := &Console{secureCookies: true}
	answer := func(notice string) *http.Cookie {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		c.Request = httptest.NewRequest("POST", "/ops/orders/o/cancel", nil)
		con.done(c, "/ops/orders?status=paid", notice)
		c.Writer.WriteHeaderNow() // as gin does after the handlers
		cookies := w.Result().Cookies()
		if w.Code != 303 || w.Header().Get("Location") != "/ops/orders?status=paid" || len(cookies) != 1 {
			t.Fatalf("the answer = %d %q, cookies %v", w.Code, w.Header().Get("Location"), cookies)
		}
		ck := cookies[0]
		if ck.Name != "__Host-"+noticeCookie || ck.Path != "/" || ck.Domain != "" || !ck.HttpOnly || !ck.Secure || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge != 60 {
			t.Errorf("the notice's cookie = %+v", ck)
		}
		return ck
	}
	pageAt := func(path string, ck *http.Cookie) (string, []*http.Cookie) {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		c.Request = httptest.NewRequest("GET", path, nil)
		if ck != nil {
			c.Request.AddCookie(ck)
		}
		return con.notice(c), w.Result().Cookies()
	}
	page := func(ck *http.Cookie) (string, []*http.Cookie) { return pageAt("/ops/orders?done=Paid+everyone", ck) }

	said := "ord_1: cancel, now cancelled — <b>ü</b>"
	left := answer(said)
	if got, set := pageAt("/ops/payouts", left); got != "" || len(set) != 0 {
		t.Errorf("another page says %q and sets %v; want nothing said or taken", got, set)
	}
	got, set := page(left)
	if got != said || len(set) != 1 || set[0].MaxAge >= 0 {
		t.Errorf("the page after the form says %q and sets %v; want %q and the cookie deleted", got, set, said)
	}
	if got, _ := page(nil); got != "" {
		t.Errorf("a page asked with ?done= and no cookie says %q", got)
	}
	long := strings.Repeat("é", maxNotice) // two bytes each
	if got, _ := page(answer(long)); got != long[:maxNotice] {
		t.Errorf("a long notice is kept as %d bytes (%t UTF-8), want its first %d", len(got), utf8.ValidString(got), maxNotice)
	}
	if got, _ := page(answer("x" + long)); got != "x"+long[:maxNotice-2] {
		t.Errorf("a long notice cut inside a character is kept as %d bytes (%t UTF-8), want %d", len(got), utf8.ValidString(got), maxNotice-1)
	}
	for _, forged := range []string{"%2Fops%2Forders.not base64!", "%2Fops%2Forders." + base64.RawURLEncoding.EncodeToString([]byte{0xff, 'a'})} {
		if got, _ := page(&http.Cookie{Name: "__Host-" + noticeCookie, Value: forged}); got != "" {
			t.Errorf("the cookie %q shows %q, want nothing", forged, got)
		}
	}
	tossed := &http.Cookie{Name: noticeCookie, Value: "%2Fops%2Forders." + base64.RawURLEncoding.EncodeToString([]byte("paid"))}
	if got, _ := page(tossed); got != "" {
		t.Errorf("a notice without the __Host- prefix (another host's) shows %q over https, want nothing", got)
	}
}
