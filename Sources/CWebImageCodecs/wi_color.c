// Colour conversion to sRGB on lcms2: a transform built once per profile, applied to RGBA8
// rows in place. Grey profiles read the first byte of each RGBA pixel (the decoders expand
// grey to R=G=B); CMYK profiles read four ink bytes and write RGBA over them. RGB
// matrix-shaper profiles take the fast path of wi_color_shaper.c instead of lcms2's evaluator.
#include "include/wi_codecs.h"
#include "wi_color_shaper.h"
#include <lcms2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wi_color_transform {
    cmsHTRANSFORM transform;     // NULL when the shaper converts
    wi_color_shaper *shaper;
    int input;
    size_t pixel_bytes;          // 4, or 8 for 16 bits a channel
};

static cmsHPROFILE srgb_profile(void) { return cmsCreate_sRGBProfile(); }

// Whether an RGB matrix-shaper profile has sRGB's colorants and curves (within what 8-bit
// output can show): converting through it would only cost time.
static int is_srgb_like(cmsHPROFILE profile) {
    if (!cmsIsMatrixShaper(profile)) return 0;
    cmsHPROFILE srgb = srgb_profile();
    if (!srgb) return 0;
    int same = 1;
    const cmsTagSignature colorants[3] = { cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag };
    const cmsTagSignature curves[3] = { cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag };
    for (int i = 0; i < 3 && same; i++) {
        const cmsCIEXYZ *a = cmsReadTag(profile, colorants[i]), *b = cmsReadTag(srgb, colorants[i]);
        if (!a || !b || fabs(a->X - b->X) > 0.002 || fabs(a->Y - b->Y) > 0.002 || fabs(a->Z - b->Z) > 0.002) same = 0;
        const cmsToneCurve *ca = cmsReadTag(profile, curves[i]), *cb = cmsReadTag(srgb, curves[i]);
        if (!ca || !cb) { same = 0; break; }
        for (int v = 0; v <= 255 && same; v += 5) {
            cmsFloat32Number x = (cmsFloat32Number)v / 255.0f;
            if (fabsf(cmsEvalToneCurveFloat(ca, x) - cmsEvalToneCurveFloat(cb, x)) > 0.5f / 255.0f) same = 0;
        }
    }
    cmsCloseProfile(srgb);
    return same;
}

static int make_transform(cmsHPROFILE input_profile, int flags, wi_color_transform **out, int *input) {
    cmsColorSpaceSignature space = cmsGetColorSpace(input_profile);
    cmsUInt32Number format;
    int kind;
    int deep = (flags & WI_COLOR_DEEP) != 0;
    switch (space) {
    case cmsSigRgbData:
        if (!(flags & WI_COLOR_LCMS_ONLY) && is_srgb_like(input_profile)) return WI_COLOR_IDENTITY;
        format = deep ? TYPE_RGBA_16 : TYPE_RGBA_8; kind = WI_COLOR_INPUT_RGBA; break;
    case cmsSigGrayData:
        format = COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | BYTES_SH(deep ? 2 : 1) | EXTRA_SH(3);
        kind = WI_COLOR_INPUT_GRAY; break;
    case cmsSigCmykData:
        if (deep) return WI_ERR_UNSUPPORTED;
        format = TYPE_CMYK_8; kind = WI_COLOR_INPUT_CMYK; break;
    default:
        return WI_ERR_UNSUPPORTED;
    }
    cmsUInt32Number klass = cmsGetDeviceClass(input_profile);
    if (klass == cmsSigLinkClass || klass == cmsSigAbstractClass || klass == cmsSigNamedColorClass) return WI_ERR_UNSUPPORTED;
    cmsHPROFILE srgb = srgb_profile();
    if (!srgb) return WI_ERR_NO_MEMORY;
    if (kind == WI_COLOR_INPUT_RGBA && !deep && !(flags & WI_COLOR_LCMS_ONLY)) {
        wi_color_shaper *shaper = wi_color_shaper_make(input_profile, srgb);
        if (shaper) {
            cmsCloseProfile(srgb);
            wi_color_transform *t = malloc(sizeof *t);
            if (!t) { wi_color_shaper_free(shaper); return WI_ERR_NO_MEMORY; }
            *t = (wi_color_transform){ .transform = NULL, .shaper = shaper, .input = kind, .pixel_bytes = 4 };
            *out = t;
            *input = kind;
            return WI_OK;
        }
    }
    // Relative colorimetric without black-point compensation: what Pillow's ImageCms and
    // libvips do by default. No cache: the transform is shared by threads.
    cmsHTRANSFORM transform = cmsCreateTransform(input_profile, format, srgb, deep ? TYPE_RGBA_16 : TYPE_RGBA_8,
                                                 INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
    cmsCloseProfile(srgb);
    if (!transform) return WI_ERR_UNSUPPORTED;
    wi_color_transform *t = malloc(sizeof *t);
    if (!t) { cmsDeleteTransform(transform); return WI_ERR_NO_MEMORY; }
    *t = (wi_color_transform){ .transform = transform, .shaper = NULL, .input = kind, .pixel_bytes = deep ? 8 : 4 };
    *out = t;
    *input = kind;
    return WI_OK;
}

int wi_color_transform_from_icc(const uint8_t *icc, size_t length, int flags, wi_color_transform **out, int *input) {
    *out = NULL; *input = 0;
    if (!icc || length < 132 || length > 0x7fffffff) return WI_ERR_CORRUPT;
    cmsHPROFILE profile = cmsOpenProfileFromMem(icc, (cmsUInt32Number)length);
    if (!profile) return WI_ERR_CORRUPT;
    int status = make_transform(profile, flags, out, input);
    cmsCloseProfile(profile);
    return status;
}

// ITU-T H.273 primaries (x, y of red, green, blue; white D65 unless stated).
static int cicp_primaries(int code, cmsCIExyYTRIPLE *primaries, cmsCIExyY *white) {
    white->x = 0.3127; white->y = 0.3290; white->Y = 1;
    switch (code) {
    case 1: *primaries = (cmsCIExyYTRIPLE){ {0.640, 0.330, 1}, {0.300, 0.600, 1}, {0.150, 0.060, 1} }; return 1;
    case 9: *primaries = (cmsCIExyYTRIPLE){ {0.708, 0.292, 1}, {0.170, 0.797, 1}, {0.131, 0.046, 1} }; return 1;
    case 12: *primaries = (cmsCIExyYTRIPLE){ {0.680, 0.320, 1}, {0.265, 0.690, 1}, {0.150, 0.060, 1} }; return 1;
    default: return 0;
    }
}

// The transfer functions an SDR image uses, as lcms2 parametric curves; 0 for the others
// (PQ and HLG need tone mapping, not a profile).
static cmsToneCurve *cicp_curve(int code) {
    switch (code) {
    case 13: { // sRGB (IEC 61966-2-1)
        cmsFloat64Number p[5] = { 2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045 };
        return cmsBuildParametricToneCurve(NULL, 4, p);
    }
    case 1: case 6: case 14: case 15: { // BT.709 / BT.601 / BT.2020 (their inverse OETF)
        cmsFloat64Number p[5] = { 1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081 };
        return cmsBuildParametricToneCurve(NULL, 4, p);
    }
    case 4: return cmsBuildGamma(NULL, 2.2);
    case 5: return cmsBuildGamma(NULL, 2.8);
    case 8: return cmsBuildGamma(NULL, 1.0);
    default: return NULL;
    }
}

int wi_color_transform_from_cicp(int primaries_code, int transfer_code, int flags, wi_color_transform **out, int *input) {
    *out = NULL; *input = 0;
    if ((primaries_code == 1 || primaries_code == 2) && (transfer_code == 13 || transfer_code == 2)) return WI_COLOR_IDENTITY;
    cmsCIExyYTRIPLE primaries;
    cmsCIExyY white;
    if (!cicp_primaries(primaries_code, &primaries, &white)) return WI_ERR_UNSUPPORTED;
    cmsToneCurve *curve = cicp_curve(transfer_code);
    if (!curve) return WI_ERR_UNSUPPORTED;
    cmsToneCurve *curves[3] = { curve, curve, curve };
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsFreeToneCurve(curve);
    if (!profile) return WI_ERR_NO_MEMORY;
    int status = make_transform(profile, flags & WI_COLOR_DEEP, out, input);
    cmsCloseProfile(profile);
    return status;
}

int wi_color_transform_is_shaper(const wi_color_transform *t) { return t && t->shaper != NULL; }

void wi_color_transform_apply(const wi_color_transform *t, uint8_t *pixels, size_t count) {
    if (t->shaper) {
        wi_color_shaper_apply(t->shaper, pixels, count);
        return;
    }
    // In place: every format here is four bytes a pixel, and lcms2 reads each pixel before it
    // writes it. In pieces, so that the count fits lcms2's 32-bit argument.
    const size_t piece = 1u << 20;
    for (size_t done = 0; done < count; done += piece) {
        size_t n = count - done < piece ? count - done : piece;
        uint8_t *p = pixels + done * t->pixel_bytes;
        cmsDoTransform(t->transform, p, p, (cmsUInt32Number)n);
        // CMYK input has no alpha: the fourth byte was the black ink.
        if (t->input == WI_COLOR_INPUT_CMYK) for (size_t i = 0; i < n; i++) p[i * 4 + 3] = 255;
    }
}

void wi_color_transform_free(wi_color_transform *t) {
    if (!t) return;
    if (t->transform) cmsDeleteTransform(t->transform);
    wi_color_shaper_free(t->shaper);
    free(t);
}

// Serialises `profile` into `out` and closes it.
static int save_and_close(cmsHPROFILE profile, wi_buffer *out) {
    cmsUInt32Number size = 0;
    int status = WI_ERR_NO_MEMORY;
    if (cmsSaveProfileToMem(profile, NULL, &size) && size > 0 && (out->data = malloc(size))) {
        if (cmsSaveProfileToMem(profile, out->data, &size)) {
            out->size = out->capacity = size;
            status = WI_OK;
        } else {
            free(out->data);
            out->data = NULL;
        }
    }
    cmsCloseProfile(profile);
    return status;
}

int wi_color_srgb_profile(wi_buffer *out) {
    memset(out, 0, sizeof *out);
    cmsHPROFILE srgb = srgb_profile();
    if (!srgb) return WI_ERR_NO_MEMORY;
    return save_and_close(srgb, out);
}

int wi_color_rgb_profile(const double white[2], const double primaries[6], double gamma, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    cmsCIExyY w = { white[0], white[1], 1 };
    cmsCIExyYTRIPLE p = { { primaries[0], primaries[1], 1 }, { primaries[2], primaries[3], 1 },
                          { primaries[4], primaries[5], 1 } };
    cmsToneCurve *curve = cmsBuildGamma(NULL, gamma);
    if (!curve) return WI_ERR_NO_MEMORY;
    cmsToneCurve *curves[3] = { curve, curve, curve };
    cmsHPROFILE profile = cmsCreateRGBProfile(&w, &p, curves);
    cmsFreeToneCurve(curve);
    if (!profile) return WI_ERR_ARGUMENT;
    return save_and_close(profile, out);
}
