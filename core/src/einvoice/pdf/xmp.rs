//! The PDF's XMP metadata: PDF/A-3 level B, the document's title, and the
//! Factur-X fields (with the PDF/A extension schema that declares them)
//! that tell a reader the file carries an EN 16931 invoice as
//! `factur-x.xml`.
//!
//! Invariants: the packet is well-formed XML (values escaped); it names
//! only the issue date (no clock), so the same document gives the same
//! bytes; the fields are those Factur-X 1.0 defines: DocumentType
//! `INVOICE` (a credit note too: the type is in the XML), DocumentFileName
//! `factur-x.xml`, Version `1.0`, ConformanceLevel `EN 16931`.

use crate::einvoice::xml::escape;

/// The Factur-X namespace.
const FX: &str = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#";

/// The packet for a document titled `title`, by `author`, dated `date`
/// (`YYYY-MM-DD`), made by `producer`.
pub fn packet(title: &str, author: &str, date: &str, producer: &str) -> String {
    let property = |name: &str, description: &str| {
        format!(
            "        <rdf:li rdf:parseType=\"Resource\">\n          <pdfaProperty:name>{name}</pdfaProperty:name>\n          <pdfaProperty:valueType>Text</pdfaProperty:valueType>\n          <pdfaProperty:category>external</pdfaProperty:category>\n          <pdfaProperty:description>{description}</pdfaProperty:description>\n        </rdf:li>\n"
        )
    };
    let properties = [
        property("DocumentFileName", "The name of the embedded XML document"),
        property(
            "DocumentType",
            "The type of the hybrid document in capital letters, e.g. INVOICE or ORDER",
        ),
        property(
            "Version",
            "The actual version of the standard applying to the embedded XML document",
        ),
        property(
            "ConformanceLevel",
            "The conformance level of the embedded XML document",
        ),
    ]
    .concat();
    let (title, author, date, producer) = (
        escape(title),
        escape(author),
        escape(date),
        escape(producer),
    );
    format!(
        "<?xpacket begin=\"\u{feff}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>
<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">
  <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">
    <rdf:Description rdf:about=\"\" xmlns:pdfaid=\"http://www.aiim.org/pdfa/ns/id/\">
      <pdfaid:part>3</pdfaid:part>
      <pdfaid:conformance>B</pdfaid:conformance>
    </rdf:Description>
    <rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">
      <dc:format>application/pdf</dc:format>
      <dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">{title}</rdf:li></rdf:Alt></dc:title>
      <dc:creator><rdf:Seq><rdf:li>{author}</rdf:li></rdf:Seq></dc:creator>
    </rdf:Description>
    <rdf:Description rdf:about=\"\" xmlns:pdf=\"http://ns.adobe.com/pdf/1.3/\">
      <pdf:Producer>{producer}</pdf:Producer>
    </rdf:Description>
    <rdf:Description rdf:about=\"\" xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\">
      <xmp:CreatorTool>{producer}</xmp:CreatorTool>
      <xmp:CreateDate>{date}</xmp:CreateDate>
      <xmp:ModifyDate>{date}</xmp:ModifyDate>
      <xmp:MetadataDate>{date}</xmp:MetadataDate>
    </rdf:Description>
    <rdf:Description rdf:about=\"\" xmlns:pdfaExtension=\"http://www.aiim.org/pdfa/ns/extension/\" xmlns:pdfaSchema=\"http://www.aiim.org/pdfa/ns/schema#\" xmlns:pdfaProperty=\"http://www.aiim.org/pdfa/ns/property#\">
      <pdfaExtension:schemas>
        <rdf:Bag>
          <rdf:li rdf:parseType=\"Resource\">
            <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
            <pdfaSchema:namespaceURI>{FX}</pdfaSchema:namespaceURI>
            <pdfaSchema:prefix>fx</pdfaSchema:prefix>
            <pdfaSchema:property>
              <rdf:Seq>
{properties}              </rdf:Seq>
            </pdfaSchema:property>
          </rdf:li>
        </rdf:Bag>
      </pdfaExtension:schemas>
    </rdf:Description>
    <rdf:Description rdf:about=\"\" xmlns:fx=\"{FX}\">
      <fx:DocumentType>INVOICE</fx:DocumentType>
      <fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>
      <fx:Version>1.0</fx:Version>
      <fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>
    </rdf:Description>
  </rdf:RDF>
</x:xmpmeta>
<?xpacket end=\"r\"?>"
    )
}
