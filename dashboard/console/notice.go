package console

import (
	"encoding/base64"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// noticeCookie carries the sentence a form's answer leaves for the page
// it sends the browser back to. Only this server sets it, so a link
// cannot make a page confirm what nobody did, as a notice read from the
// URL could.
const noticeCookie = "domaind_ops_notice"

// maxNotice is the longest notice kept, in bytes: a cookie holds 4 KiB,
// and a notice is a sentence.
const maxNotice = 1000

// done answers a form that changed something: back to path (303), whose
// page says notice once.
func (con *Console) done(c *gin.Context, path, notice string) {
	if len(notice) > maxNotice {
		notice = strings.ToValidUTF8(notice[:maxNotice], "")
	}
	con.setNotice(c, base64.RawURLEncoding.EncodeToString([]byte(notice)), 60)
	c.Redirect(http.StatusSeeOther, path)
}

// notice is what the last form's answer left for this page, once: reading
// it deletes it.
func (con *Console) notice(c *gin.Context) string {
	kept, err := c.Cookie(con.noticeName())
	if err != nil || kept == "" {
		return ""
	}
	con.setNotice(c, "", -1)
	text, err := base64.RawURLEncoding.DecodeString(kept)
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

// noticeName is the notice cookie's name: with the __Host- prefix over
// https, as the api package names its cookies, so that no other host of
// the domain can set it.
func (con *Console) noticeName() string {
	if con.secureCookies {
		return "__Host-" + noticeCookie
	}
	return noticeCookie
}
