package console

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
)

// noticeCookie carries the sentence a form's answer leaves for the page
// it sends the browser back to. Only this server sets it, so a link
// cannot make a page confirm what nobody did, as a notice read from the
// URL could.
const noticeCookie = "domaind_ops_notice"

// maxNotice is the longest notice kept, in bytes: a cookie holds 4 KiB,
// and a notice is a sentence.
const maxNotice = 1000

// done answers a form that changed something: back to target (303), a
// path with its query, whose page says notice once.
func (con *Console) done(c *gin.Context, target, notice string) {
	if len(notice) > maxNotice {
		notice = strings.ToValidUTF8(notice[:maxNotice], "")
	}
	path, _, _ := strings.Cut(target, "?")
	con.setNotice(c, url.PathEscape(path)+"."+base64.RawURLEncoding.EncodeToString([]byte(notice)), 60)
	c.Redirect(http.StatusSeeOther, target)
}

// notice is what the last form's answer left for this page, once: reading
// it deletes it. A notice left for another page (the form's answer still
// on its way while another tab loads a page) is left for it.
func (con *Console) notice(c *gin.Context) string {
	kept, err := c.Cookie(con.noticeName())
	if err != nil || kept == "" {
		return ""
	}
	escaped, encoded, _ := strings.Cut(kept, ".")
	if path, err := url.PathUnescape(escaped); err == nil && path != c.Request.URL.Path {
		return ""
	}
	con.setNotice(c, "", -1)
	text, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil || !utf8.Valid(text) {
		return ""
	}
	return string(text)
}

// setNotice sets the notice cookie to value for maxAge seconds (a
// negative one deletes it). It goes only with requests from this site's
// own pages (a form's answer is a same-site redirect).
func (con *Console) setNotice(c *gin.Context, value string, maxAge int) {
	http.SetCookie(c.Writer, &http.Cookie{Name: con.noticeName(), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: con.secureCookies, SameSite: http.SameSiteStrictMode})
}

// noticeName is the notice cookie's name, as the api package names its
// cookies (page.CookieName).
func (con *Console) noticeName() string { return page.CookieName(noticeCookie, con.secureCookies) }
